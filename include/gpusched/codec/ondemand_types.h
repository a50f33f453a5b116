// The simdjson On-Demand types gpusched's decoders read JSON through, named here once for all of
// them. A decoder brings them in with `using namespace ondemand_types;` inside its own anonymous
// namespace, so the short names (value, object...) never reach the rest of namespace gpusched.
#pragma once

#include <simdjson.h>

namespace gpusched::ondemand_types {

using simdjson::ondemand::array;
using simdjson::ondemand::field;
using simdjson::ondemand::json_type;
using simdjson::ondemand::object;
using simdjson::ondemand::value;

}  // namespace gpusched::ondemand_types
