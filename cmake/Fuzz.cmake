# GFP_FUZZ: libFuzzer targets under fuzz/ (docs/fuzzing.md). Needs clang. Every project library is
# compiled with coverage instrumentation and ASan+UBSan (fuzzer-no-link); only the fuzz targets
# link the libFuzzer driver (gfp_fuzz_target in fuzz/CMakeLists.txt).
if(GFP_FUZZ)
  if(NOT CMAKE_CXX_COMPILER_ID STREQUAL "Clang")
    message(FATAL_ERROR "GFP_FUZZ needs clang (configure with -DCMAKE_CXX_COMPILER=clang++ "
                        "-DCMAKE_C_COMPILER=clang); this is ${CMAKE_CXX_COMPILER_ID}")
  endif()
  if(GFP_SANITIZE OR GFP_TSAN)
    message(FATAL_ERROR "GFP_FUZZ brings its own sanitizers: leave GFP_SANITIZE and GFP_TSAN off")
  endif()
  # -O1 and line tables only (as OSS-Fuzz builds): about a fifth less compile time than -O2 -g,
  # and stack traces still name file and line. They come after CMAKE_CXX_FLAGS_<CONFIG>, so win.
  add_compile_options(-fsanitize=fuzzer-no-link,address,undefined -fno-omit-frame-pointer
                      -fno-sanitize-recover=all -O1 -gline-tables-only)
  add_link_options(-fsanitize=address,undefined)
endif()
