#include "fuzz/fuzz_checks.h"

#include <stdlib.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>

#include <simdjson.h>

#include "fuzz/json_grammar.h"
#include "fuzz/quantity_oracle.h"
#include "gpusched/cluster/cluster_ledger.h"
#include "gpusched/codec/extender_codec.h"
#include "gpusched/codec/k8s_decode.h"
#include "gpusched/codec/yaml_to_json.h"
#include "gpusched/engine/engine.h"
#include "gpusched/extender/extender_service.h"
#include "gpusched/inventory/static_inventory.h"
#include "gpusched/kube/kube_config.h"
#include "gpusched/kube/reflector.h"
#include "gpusched/kube/watch_stream.h"
#include "gpusched/policy/policy.h"
#include "gpusched/policy/policy_file.h"
#include "gpusched/sim/scenario.h"
#include "gpusched/util/published.h"
#include "gpusched/util/quantity.h"

namespace gpusched::fuzz {
namespace {

bool step_over_known_bugs = false;

// A broken property is a bug like a crash: say which, and stop where a debugger or libFuzzer sees
// the stack.
void Require(bool holds, const char* property) {
  if (holds) return;
  std::fprintf(stderr, "fuzz check failed: %s\n", property);
  __builtin_trap();
}

// The server's stack over the bundled sample cluster and the built-in default policy, built once:
// building it per input would dwarf the request's own cost.
struct SampleStack {
  SampleStack() {
    ClusterLedger ledger{GpuResourceNames()};
    ApplyInventory(ParseInventory(kSampleClusterYaml, "sample cluster"), ledger);
    snapshots.Set(ledger.BuildSnapshot());
  }
  Published<ClusterSnapshot> snapshots;
  Published<Policy> policies{std::make_shared<const Policy>(DefaultPolicySpec())};
  ExtenderService service{snapshots, policies};
};

size_t SizeOf(const std::optional<std::vector<std::string_view>>& list) {
  return list ? list->size() : 0;
}

// Decodes one JSON object with `decode` (DecodePod or DecodeNode) the way DecodeExtenderArgs and
// the inventory readers do: simdjson errors become DecodeError, trailing data is rejected.
template <class Decode>
void DecodeObject(std::string_view input, Decode&& decode) {
  thread_local simdjson::ondemand::parser parser;
  simdjson::padded_string json(input);
  try {
    WithContext("object", [&] {
      simdjson::ondemand::document doc = parser.iterate(json);
      decode(doc.get_object().value());
      ExpectEnd(doc);
    });
  } catch (const DecodeError&) {
  }
}

// Kubeconfig files are written here, where relative paths in them find nothing.
class PrivateDir {
 public:
  PrivateDir() {
    std::string pattern = std::filesystem::temp_directory_path() / "gpusched-fuzz-XXXXXX";
    if (!::mkdtemp(pattern.data())) throw std::runtime_error("mkdtemp failed");
    dir_ = pattern;
  }
  ~PrivateDir() { std::filesystem::remove_all(dir_); }
  std::string File(const std::string& name) const { return dir_ + "/" + name; }

 private:
  std::string dir_;
};

}  // namespace

void StepOverKnownBugs() { step_over_known_bugs = true; }

void CheckExtenderRequest(std::string_view input) {
  static const SampleStack stack;
  ExtenderArgs args;
  try {
    args = DecodeExtenderArgs(input);
  } catch (const DecodeError&) {
    return;
  }
  size_t nodes = args.node_names ? args.node_names->size() : args.nodes->size();

  ExtenderFilterResult filtered = stack.service.Filter(args);
  Require(SizeOf(filtered.node_names) + SizeOf(filtered.nodes_raw) + filtered.failed_nodes.size() +
                  filtered.failed_and_unresolvable_nodes.size() ==
              nodes,
          "filter: every node passes or fails, once");
  Require(IsJsonText(EncodeExtenderFilterResult(filtered)), "filter: the answer is JSON");

  HostPriorityList scores = stack.service.Prioritize(args);
  Require(scores.hosts.size() == nodes, "prioritize: one score per node");
  for (const HostPriority& h : scores.hosts) {
    Require(h.score >= 0 && h.score <= kMaxExtenderPriority, "prioritize: scores in 0..10");
  }
  Require(IsJsonText(EncodeHostPriorityList(scores)), "prioritize: the answer is JSON");
}

namespace {

// Decodes what it is handed as the live inventory's pod sink does, and counts it.
struct CountingPodSink : ReflectorSink {
  size_t applied = 0;
  void BeginList() override {}
  void AddListed(simdjson::ondemand::object o) override {
    DecodePod(o);
    ++applied;
  }
  void EndList() override {}
  void Apply(std::string_view type, simdjson::ondemand::object o) override {
    if (type == "DELETED") {
      DecodeIdentity(o);
    } else {
      DecodePod(o);
    }
    ++applied;
  }
};

}  // namespace

void CheckWatchStream(std::string_view input) {
  CountingPodSink sink;
  ObjectSkips skips("fuzz");
  try {
    ApplyListPage(simdjson::padded_string(input), sink, skips);
  } catch (const DecodeError&) {
  } catch (const simdjson::simdjson_error&) {
  }
  // Every line is one event; none may throw, whatever it holds.
  size_t lines = 0;
  for (size_t start = 0; start <= input.size(); ++lines) {
    size_t end = std::min(input.find('\n', start), input.size());
    ApplyWatchLine(input.substr(start, end - start), sink, skips);
    start = end + 1;
  }
  Require(lines >= 1, "watch stream: every line handled");
}

void CheckPodDecoder(std::string_view input) {
  DecodeObject(input, [](simdjson::ondemand::object o) {
    // Node pins stay within their budget (gpusched/model/node_pins.h), whatever the pod holds.
    const NodePins pins = DecodePod(o).pins;
    size_t items = pins.required.size() + pins.preferred.size();
    auto add = [&](const std::vector<PinRequirement>& requirements) {
      for (const auto& r : requirements) items += 1 + r.values.size();
    };
    add(pins.selector);
    for (const auto& t : pins.required) add(t.requirements);
    for (const auto& p : pins.preferred) add(p.term.requirements);
    Require(items <= kMaxPinItems, "pod: node pins within their budget");
  });
}

void CheckNodeDecoder(std::string_view input) {
  DecodeObject(input, [](simdjson::ondemand::object o) {
    NodeInfo node = DecodeNode(o);
    for (const ResourceList* list : {&node.capacity, &node.allocatable}) {
      for (const auto& amount : *list) {
        bool tracked = amount.name.find('/') != std::string::npos || amount.name == "cpu" ||
                       amount.name == "memory" || amount.name == "pods";
        Require(tracked, "node: only extended resources, cpu, memory and pods kept");
        Require(amount.milli >= 0, "node: no negative amount");
      }
    }
  });
}

void CheckYamlToJson(std::string_view input) {
  std::vector<std::string> documents;
  try {
    documents = YamlDocumentsToJson(input);
  } catch (const YamlError&) {
    return;
  }
  // Only UTF-8 input must come out as UTF-8: other bytes pass through. Input with NUL bytes may
  // read as UTF-16 or UTF-32 (YAML's encoding detection), and yaml-cpp then writes the code points
  // such input spells, even those past U+10FFFF, as bytes that are not UTF-8.
  bool utf8 = simdjson::validate_utf8(input.data(), input.size()) &&
              input.find('\0') == std::string_view::npos;
  // TODO remove when YamlDocumentsToJson writes the escapes \N and \_ as UTF-8: yaml-cpp 0.7
  // unescapes them to the single bytes 0x85 and 0xA0
  // (regressions/yaml_to_json/DISABLED_nel_and_nbsp_escapes.yaml)
  if (step_over_known_bugs && (input.find("\\N") != std::string_view::npos ||
                               input.find("\\_") != std::string_view::npos)) {
    utf8 = false;
  }
  for (const std::string& json : documents) {
    Require(utf8 ? IsJsonText(json) : MatchesJsonGrammar(json), "yaml: every document is JSON");
  }
}

void CheckPolicyReader(std::string_view input) {
  PolicyParseResult parsed = ParsePolicy(input, "fuzz.yaml");
  Require(parsed.spec.has_value() == parsed.errors.empty(),
          "policy: a spec exactly without errors");
  if (!parsed.spec) return;
  std::string formatted = FormatPolicy(*parsed.spec);
  PolicyParseResult again = ParsePolicy(formatted, "formatted.yaml");
  Require(again.spec.has_value(), "policy: FormatPolicy's text parses");
  Require(FormatPolicy(*again.spec) == formatted,
          "policy: FormatPolicy's text reads back the same");
  try {
    Policy policy(*std::move(parsed.spec));
  } catch (const std::invalid_argument&) {
  }
}

void CheckScenarioReader(std::string_view input) {
  try {
    Scenario scenario = ParseScenario(input, "fuzz.yaml");
    Require(!scenario.nodes.empty(), "scenario: at least one node");
  } catch (const TraceError&) {
  }
}

void CheckQuantity(std::string_view input) {
  Require(ParseQuantityMilli(input) == ReferenceQuantityMilli(input),
          "quantity: ParseQuantityMilli agrees with ReferenceQuantityMilli");
}

void CheckKubeconfigReader(std::string_view input) {
  static const PrivateDir dir;
  std::string path = dir.File("kubeconfig");
  std::ofstream(path, std::ios::binary | std::ios::trunc).write(input.data(), input.size());
  try {
    KubeConfig config = LoadKubeconfig(path);
    Require(!config.server.empty(), "kubeconfig: a server");
  } catch (const KubeConfigError&) {
  }
}

std::span<const FuzzCheck> AllFuzzChecks() {
  static constexpr FuzzCheck kChecks[] = {
      {"extender_request", CheckExtenderRequest},
      {"pod", CheckPodDecoder},
      {"node", CheckNodeDecoder},
      {"yaml_to_json", CheckYamlToJson},
      {"policy", CheckPolicyReader},
      {"scenario", CheckScenarioReader},
      {"quantity", CheckQuantity},
      {"kubeconfig", CheckKubeconfigReader},
      {"watch_stream", CheckWatchStream},
  };
  return kChecks;
}

}  // namespace gpusched::fuzz
