// The straightforward codec, for comparison only: requests parsed into an nlohmann::json DOM and
// walked, responses built as a DOM and dumped. It produces the same ExtenderArgs and the same
// answers as the production codec (tests/baseline_identity_test.cc checks it), so the benchmarks
// can report the production codec's speed-up as a ratio measured in the same run.
#pragma once

#include <string>
#include <string_view>

#include "gpusched/codec/extender_types.h"

namespace gpusched::baseline {

ExtenderArgs DecodeExtenderArgs(std::string_view json);
std::string EncodeExtenderFilterResult(const ExtenderFilterResult& result);
std::string EncodeHostPriorityList(const HostPriorityList& list);

}  // namespace gpusched::baseline
