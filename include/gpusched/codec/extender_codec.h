// JSON encoding and decoding of the extender wire types.
//
// Decoders accept exactly what kube-scheduler's Go encoding/json would: envelope keys matched
// case-insensitively, unknown keys ignored, null for any map, slice or pointer; they throw
// DecodeError (one line, naming the field) on anything else, including trailing garbage. Encoders
// write compact JSON with the exact PascalCase keys and integers as integers.
#ifndef GPUSCHED_CODEC_EXTENDER_CODEC_H_
#define GPUSCHED_CODEC_EXTENDER_CODEC_H_

#include <string>
#include <string_view>

#include "gpusched/codec/extender_types.h"

namespace gpusched {

ExtenderArgs DecodeExtenderArgs(std::string_view json);
ExtenderFilterResult DecodeExtenderFilterResult(std::string_view json);
HostPriorityList DecodeHostPriorityList(std::string_view json);
ExtenderBindingArgs DecodeExtenderBindingArgs(std::string_view json);
ExtenderBindingResult DecodeExtenderBindingResult(std::string_view json);
ExtenderPreemptionArgs DecodeExtenderPreemptionArgs(std::string_view json);
ExtenderPreemptionResult DecodeExtenderPreemptionResult(std::string_view json);

std::string EncodeExtenderArgs(const ExtenderArgs& args);
std::string EncodeExtenderPreemptionArgs(const ExtenderPreemptionArgs& args);
std::string EncodeExtenderFilterResult(const ExtenderFilterResult& result);
std::string EncodeHostPriorityList(const HostPriorityList& list);
std::string EncodeExtenderBindingArgs(const ExtenderBindingArgs& args);
std::string EncodeExtenderBindingResult(const ExtenderBindingResult& result);
std::string EncodeExtenderPreemptionResult(const ExtenderPreemptionResult& result);
// The HTTP error body: {"error":"<message>"}.
std::string EncodeError(std::string_view message);

}  // namespace gpusched

#endif  // GPUSCHED_CODEC_EXTENDER_CODEC_H_
