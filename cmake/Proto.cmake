# gfp_proto_library(<target> PROTO_ROOT <dir> PROTOS <relative paths...> [GRPC])
# Generates C++ (and optionally gRPC) sources keeping the relative paths, so two files named
# api.proto in different packages never collide.
function(gfp_proto_library target)
  cmake_parse_arguments(ARG "GRPC" "PROTO_ROOT" "PROTOS" ${ARGN})
  set(out_dir ${CMAKE_CURRENT_BINARY_DIR}/gen)
  file(MAKE_DIRECTORY ${out_dir})
  set(srcs)
  foreach(rel ${ARG_PROTOS})
    get_filename_component(dir ${rel} DIRECTORY)
    get_filename_component(stem ${rel} NAME_WE)
    if(dir)
      set(base ${out_dir}/${dir}/${stem})
    else()
      set(base ${out_dir}/${stem})
    endif()
    set(outs ${base}.pb.cc ${base}.pb.h)
    set(grpc_args)
    if(ARG_GRPC)
      list(APPEND outs ${base}.grpc.pb.cc ${base}.grpc.pb.h)
      set(grpc_args --grpc_out=${out_dir} --plugin=protoc-gen-grpc=$<TARGET_FILE:gRPC::grpc_cpp_plugin>)
    endif()
    add_custom_command(
      OUTPUT ${outs}
      COMMAND protobuf::protoc -I ${ARG_PROTO_ROOT} --cpp_out=${out_dir} ${grpc_args} ${rel}
      DEPENDS ${ARG_PROTO_ROOT}/${rel} protobuf::protoc
      COMMENT "protoc ${rel}"
      VERBATIM)
    list(APPEND srcs ${outs})
  endforeach()
  add_library(${target} STATIC ${srcs})
  target_include_directories(${target} SYSTEM PUBLIC ${out_dir})
  target_link_libraries(${target} PUBLIC protobuf::libprotobuf)
  if(ARG_GRPC)
    target_link_libraries(${target} PUBLIC gRPC::grpc++)
  endif()
  target_compile_options(${target} PRIVATE -w)
endfunction()
