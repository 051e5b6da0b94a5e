# Generates a C++ source holding every file of share/product-base as a string, so the crmd binary
# carries its product base and needs no data path at run time.
# Usage: cmake -DSRC=<dir> -DOUT=<file.cpp> -P embed_product_base.cmake
file(GLOB_RECURSE files RELATIVE ${SRC} ${SRC}/*)
list(SORT files)
set(body "// Generated from share/product-base by cmake/embed_product_base.cmake. Do not edit.\n")
string(APPEND body "#include \"schema/product_base_files.hpp\"\n\nnamespace crmd::schema {\n\n")
string(APPEND body "const std::vector<EmbeddedFile>& ProductBaseFiles() {\n  static const std::vector<EmbeddedFile> files = {\n")
foreach(f ${files})
  file(READ ${SRC}/${f} content)
  string(FIND "${content}" ")crmd_pb\"" clash)
  if(NOT clash EQUAL -1)
    message(FATAL_ERROR "${f} contains the raw-string delimiter")
  endif()
  string(APPEND body "    {\"${f}\", R\"crmd_pb(${content})crmd_pb\"},\n")
endforeach()
string(APPEND body "  };\n  return files;\n}\n\n}  // namespace crmd::schema\n")
file(WRITE ${OUT}.tmp "${body}")
file(COPY_FILE ${OUT}.tmp ${OUT} ONLY_IF_DIFFERENT)
