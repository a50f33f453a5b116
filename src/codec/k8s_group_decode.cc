#include "gpusched/codec/k8s_group_decode.h"

#include <algorithm>
#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "gpusched/codec/ondemand_types.h"
#include "gpusched/model/node_pins.h"
#include "gpusched/util/quote.h"

namespace gpusched {
// A namespace of its own: the codec layer may be compiled as one unit (GPUSCHED_UNITY_BUILD).
namespace group_decode {
namespace {

using namespace ondemand_types;  // NOLINT(google-build-using-namespace)

// A JSON integer; nullopt for null. Digits past int64 read as its bound, so that the size they
// state is refused as out of range rather than the object as undecodable.
std::optional<int64_t> Integer(value v) {
  if (IsNull(v)) return std::nullopt;
  if (v.type() != json_type::number) throw DecodeError("not an integer");
  std::string_view text = ScalarText(v);
  if (std::optional<int64_t> n = ParsePinInteger(text)) return n;
  std::string_view digits = text.starts_with('-') ? text.substr(1) : text;
  if (!digits.empty() &&
      std::all_of(digits.begin(), digits.end(), [](char c) { return c >= '0' && c <= '9'; })) {
    return text.starts_with('-') ? std::numeric_limits<int64_t>::min()
                                 : std::numeric_limits<int64_t>::max();
  }
  throw DecodeError("not an integer: \"" + QuoteForMessage(text, 64) + "\"");
}

// Calls `read(minCount)` on `gang`'s minCount: `{gang: {minCount: N}}` as a policy writes it.
template <class F>
void GangMinCount(value policy, F&& read) {
  ForFields(policy, [&](std::string_view key, value gang) {
    if (key != "gang" || IsNull(gang)) return;
    ForFields(gang, [&](std::string_view gkey, value n) {
      if (gkey == "minCount") read(Integer(n));
    });
  });
}

// What the spec of one object states, before its keys are made (metadata may come after it).
struct Stated {
  std::string part;             // the Workload's pod group; empty: the object's own group
  std::optional<int64_t> size;  // as written; nullopt: states none
};

std::vector<Stated> ReadSpec(GroupSizeKind kind, value spec) {
  std::vector<Stated> out;
  switch (kind) {
    case GroupSizeKind::kJob: {
      std::optional<int64_t> parallelism;
      std::optional<int64_t> completions;
      ForFields(spec, [&](std::string_view key, value x) {
        if (key == "parallelism") parallelism = Integer(x);
        if (key == "completions") completions = Integer(x);
      });
      int64_t size = parallelism.value_or(1);
      if (completions) size = std::min(size, *completions);
      // One pod is no gang, and parallelism 0 pauses the Job; a negative count is refused.
      if (size < 0 || size >= 2) out.push_back({"", size});
      break;
    }
    case GroupSizeKind::kPodGroup:
      ForFields(spec, [&](std::string_view key, value policy) {
        if (key != "schedulingPolicy") return;
        GangMinCount(policy, [&](std::optional<int64_t> n) {
          if (n) out.push_back({"", n});
        });
      });
      break;
    case GroupSizeKind::kWorkload:
      ForFields(spec, [&](std::string_view key, value groups) {
        if (key != "podGroups" || IsNull(groups)) return;
        size_t index = 0;
        for (value group : groups.get_array()) {
          if (index == kMaxWorkloadPodGroups) {
            throw DecodeError("more than " + std::to_string(kMaxWorkloadPodGroups) + " pod groups");
          }
          WithContext("[" + std::to_string(index++) + "]", [&] {
            Stated stated;
            ForFields(group, [&](std::string_view gkey, value x) {
              if (gkey == "name") stated.part = ScalarText(x);
              if (gkey == "policy")
                GangMinCount(x, [&](std::optional<int64_t> n) { stated.size = n; });
            });
            if (stated.part.empty()) throw DecodeError("no name");
            if (stated.size) out.push_back(std::move(stated));
          });
        }
      });
      break;
    case GroupSizeKind::kVolcano:
    case GroupSizeKind::kKai:
    case GroupSizeKind::kCoscheduling:
      ForFields(spec, [&](std::string_view key, value n) {
        if (key == "minMember") {
          std::optional<int64_t> size = Integer(n);
          if (size) out.push_back({"", size});
        }
      });
      break;
  }
  return out;
}

}  // namespace
}  // namespace group_decode

std::string_view GroupSourceOf(GroupSizeKind kind) {
  switch (kind) {
    case GroupSizeKind::kJob:
      return "job";
    case GroupSizeKind::kPodGroup:
      return "podgroup";
    case GroupSizeKind::kWorkload:
      return "workload";
    case GroupSizeKind::kVolcano:
      return "volcano";
    case GroupSizeKind::kKai:
      return "kai";
    case GroupSizeKind::kCoscheduling:
      return "coscheduling";
  }
  return "";
}

StatedGroupSizes DecodeStatedGroupSizes(GroupSizeKind kind, simdjson::ondemand::object o) {
  using namespace group_decode;  // NOLINT(google-build-using-namespace): this file's helpers
  std::string ns;
  std::string name;
  std::vector<Stated> stated;
  for (field f : o) {
    std::string_view key = f.unescaped_key();
    if (key == "metadata") {
      WithContext("metadata", [&] {
        ForFields(f.value(), [&](std::string_view mkey, value x) {
          if (mkey == "namespace") ns = ScalarText(x);
          if (mkey == "name") name = ScalarText(x);
        });
      });
    } else if (key == "spec") {
      stated = WithContext("spec", [&] { return ReadSpec(kind, f.value()); });
    }
  }
  if (name.empty()) throw DecodeError("metadata: name: missing");
  if (ns.empty()) throw DecodeError("metadata: namespace: missing");
  StatedGroupSizes out;
  out.object = ns + "/" + name;
  for (const Stated& s : stated) {
    std::string group = GroupKey(ns, GroupSourceOf(kind), name, s.part);
    if (group.empty() || *s.size < 1 || *s.size > kMaxGroupSize) {
      ++out.refused;
      continue;
    }
    out.sizes.push_back({std::move(group), static_cast<int32_t>(*s.size)});
  }
  return out;
}

}  // namespace gpusched
