# Adds every direct subfolder that has a CMakeLists.txt, in name order. Lets several modules
# share a parent folder (src/adapters/pci, src/adapters/fm, …) without editing a common file.
function(gfp_add_subdirectories_with_cmake)
  file(GLOB children LIST_DIRECTORIES true CONFIGURE_DEPENDS ${CMAKE_CURRENT_SOURCE_DIR}/*)
  list(SORT children)
  foreach(dir ${children})
    if(IS_DIRECTORY ${dir} AND EXISTS ${dir}/CMakeLists.txt)
      add_subdirectory(${dir})
    endif()
  endforeach()
endfunction()
