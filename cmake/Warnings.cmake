# Every target of the project gets the same strict warnings; generated protobuf code is compiled
# in its own targets with warnings relaxed (see Proto.cmake) because we do not own it.
function(gfp_strict_warnings target)
  target_compile_options(${target} PRIVATE -Wall -Wextra -Werror -Wpedantic -Wshadow
                         -Wnon-virtual-dtor -Wold-style-cast -Wcast-align -Wunused
                         -Woverloaded-virtual -Wimplicit-fallthrough)
endfunction()
