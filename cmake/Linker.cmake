# Links with lld when the compiler can use it (Debian's lld, which scripts/install-deps.sh
# installs): the test binaries of the sanitizer builds are large, and GNU ld spends seconds on
# each. GFP_LINKER=default keeps the toolchain's linker.
set(GFP_LINKER "lld" CACHE STRING "Linker: lld (when usable) or default")
if(GFP_LINKER STREQUAL "lld")
  include(CheckLinkerFlag)
  check_linker_flag(CXX "-fuse-ld=lld" GFP_LLD_USABLE)
  if(GFP_LLD_USABLE)
    add_link_options(-fuse-ld=lld)
  endif()
endif()
