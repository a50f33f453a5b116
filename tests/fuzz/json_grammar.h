// IsJsonText: whether text is one JSON text by RFC 8259's grammar (any whitespace around one value,
// UTF-8, strings with only the standard escapes), with no limit on number range or nesting beyond
// the call stack. The fuzz checks judge what gpusched writes with it: grammar only, because a
// parser's range limits (1e999, big integers) are not the writer's business.
#pragma once

#include <string_view>

namespace gpusched::fuzz {

bool IsJsonText(std::string_view text);
// The grammar alone, for text whose bytes are not all UTF-8 by no fault of its writer.
bool MatchesJsonGrammar(std::string_view text);

}  // namespace gpusched::fuzz
