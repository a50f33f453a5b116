# Turns INPUT into a C++ source defining gpusched::${NAME} (a string_view over the bytes; NAME
# defaults to kSampleClusterYaml).
if(NOT NAME)
  set(NAME kSampleClusterYaml)
endif()
file(READ ${INPUT} content HEX)
string(LENGTH "${content}" hex_length)
math(EXPR byte_count "${hex_length} / 2")
string(REGEX REPLACE "([0-9a-f][0-9a-f])" "0x\\1," bytes "${content}")
file(WRITE ${OUTPUT}
  "// Generated from ${INPUT}; do not edit.\n"
  "#include <string_view>\n"
  "namespace gpusched {\n"
  "namespace {\nconst char kBytes[] = {${bytes} 0};\n}\n"
  "extern const std::string_view ${NAME}(kBytes, ${byte_count});\n"
  "}  // namespace gpusched\n")
