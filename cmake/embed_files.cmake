# Generates a C++ source holding every file of a folder as a string, so the crmd binary carries it
# and needs no data path at run time: the product base (share/product-base) and the console
# (web/). Text files only (a raw string literal holds them as they are).
# Usage: cmake -DSRC=<dir> -DOUT=<file.cpp> -DHEADER=<include> -DNAMESPACE=<ns> -DFUNCTION=<name>
#        -P embed_files.cmake
# The generated function returns `const std::vector<util::EmbeddedFile>&`, paths relative to SRC,
# sorted; HEADER declares it.
file(GLOB_RECURSE files RELATIVE ${SRC} ${SRC}/*)
list(SORT files)
set(body "// Generated from ${SRC} by cmake/embed_files.cmake. Do not edit.\n")
string(APPEND body "#include \"${HEADER}\"\n\nnamespace ${NAMESPACE} {\n\n")
string(APPEND body "const std::vector<util::EmbeddedFile>& ${FUNCTION}() {\n  static const std::vector<util::EmbeddedFile> files = {\n")
foreach(f ${files})
  file(READ ${SRC}/${f} content)
  string(FIND "${content}" ")crmd_embed\"" clash)
  if(NOT clash EQUAL -1)
    message(FATAL_ERROR "${f} contains the raw-string delimiter")
  endif()
  string(APPEND body "    {\"${f}\", R\"crmd_embed(${content})crmd_embed\"},\n")
endforeach()
string(APPEND body "  };\n  return files;\n}\n\n}  // namespace ${NAMESPACE}\n")
file(WRITE ${OUT}.tmp "${body}")
file(COPY_FILE ${OUT}.tmp ${OUT} ONLY_IF_DIFFERENT)
