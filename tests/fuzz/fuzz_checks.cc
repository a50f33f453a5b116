// Longer than 500 lines: the properties of every fuzz target, sharing their decoders and Require.
#include "fuzz/fuzz_checks.h"

#include <stdlib.h>
#include <unistd.h>

#include <algorithm>
#include <charconv>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <memory>
#include <optional>
#include <set>
#include <stdexcept>
#include <string>
#include <tuple>
#include <vector>

#include <simdjson.h>

#include "fuzz/json_grammar.h"
#include "fuzz/quantity_oracle.h"
#include "gpusched/admission/pod_mutator.h"
#include "gpusched/cluster/cluster_ledger.h"
#include "gpusched/codec/admission_codec.h"
#include "gpusched/codec/extender_codec.h"
#include "gpusched/codec/k8s_decode.h"
#include "gpusched/codec/k8s_dra_decode.h"
#include "gpusched/codec/k8s_group_decode.h"
#include "gpusched/codec/k8s_pdb_decode.h"
#include "gpusched/codec/placeholder_codec.h"
#include "gpusched/codec/yaml_to_json.h"
#include "gpusched/dra/dra_claims.h"
#include "gpusched/dra/dra_ledger.h"
#include "gpusched/dra/dra_selector.h"
#include "gpusched/dra/dra_stored_slice.h"
#include "gpusched/engine/engine.h"
#include "gpusched/extender/extender_service.h"
#include "gpusched/inventory/static_inventory.h"
#include "gpusched/kube/kube_config.h"
#include "gpusched/kube/reflector.h"
#include "gpusched/kube/watch_stream.h"
#include "gpusched/model/gpu_facts.h"
#include "gpusched/planning/mig_layouts.h"
#include "gpusched/policy/policy.h"
#include "gpusched/policy/policy_file.h"
#include "gpusched/server/http_request_parser.h"
#include "gpusched/sim/openb_trace.h"
#include "gpusched/sim/scenario.h"
#include "gpusched/sim/sim_policy.h"
#include "gpusched/sim/simulator.h"
#include "gpusched/sim/workload.h"
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
  } catch (const DecodeError& e) {
    // A bound a refusal names is a `reason` label value (lower-case words joined by '_').
    const std::string_view bound = e.bound() != nullptr ? e.bound() : "";
    Require(std::all_of(bound.begin(), bound.end(),
                        [](char c) { return c == '_' || (c >= 'a' && c <= 'z'); }),
            "a refusal's bound is a label value");
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
  Require(scores.hosts.size() <= nodes, "prioritize: at most one score per node");
  for (const HostPriority& h : scores.hosts) {
    Require(h.score > 0 && h.score <= kMaxExtenderPriority, "prioritize: listed scores in 1..10");
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
    ApplyListPage(input, sink, skips);
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
    const PodInfo pod = DecodePod(o);
    Require(pod.claims.size() <= kMaxPodClaims, "pod: claims within their bound");
    Require(pod.claims_not_kept == 0 || pod.claims.size() == kMaxPodClaims,
            "pod: claims past the bound only once it is full");
    const NodePins& pins = pod.pins;
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

void CheckAdmissionReview(std::string_view input) {
  // The webhook as served: the default policy, no inventory (the vocabulary of the tables alone).
  static const Published<ClusterSnapshot> snapshots;
  static const Published<Policy> policies{std::make_shared<const Policy>(DefaultPolicySpec())};
  static PodMutator mutator(snapshots, policies);
  PodMutator::Answer answer = mutator.Review(input);
  Require(answer.status == 200 || answer.status == 400, "admission: 200, or 400 without a uid");
  Require(IsJsonText(answer.body), "admission: the answer is JSON");
  Require(answer.body.find('\n') == std::string::npos, "admission: the answer is one line");
  const Mutation& m = answer.mutation;
  if (m.result == MutationResult::kPatched) {
    Require(IsJsonText(m.patch), "admission: the patch is JSON");
    Require(answer.body.find(Base64(m.patch)) != std::string::npos,
            "admission: the answer carries the patch");
    Require(m.terms <= 64, "admission: at most maxNodeSelectorTerms terms");
  } else {
    Require(answer.body.find("\"patch\"") == std::string::npos,
            "admission: no patch unless patched");
  }
  // The same bytes as the Pod a placeholder copies (a GET of the pending pod).
  PlaceholderPod placeholder;
  try {
    placeholder.copied = DecodePodSchedulingText(input);
  } catch (const DecodeError&) {
    return;
  }
  placeholder.namespace_name = "ns";
  placeholder.owner_name = "pod";
  placeholder.owner_uid = placeholder.copied.uid;
  placeholder.excluded_nodes = {"node-a", "node-b"};
  placeholder.requests = ResourceList{{"nvidia.com/gpu", 1000}};
  Require(IsJsonText(EncodePlaceholderPod(placeholder)), "placeholder: the pod is JSON");
}

void CheckPdbDecoder(std::string_view input) {
  DecodeObject(input, [](simdjson::ondemand::object o) {
    const DisruptionBudget budget = DecodeDisruptionBudget(o);
    const LabelSelector& selector = budget.selector;
    size_t items = 0;
    for (const auto& r : selector.requirements) items += 1 + r.values.size();
    Require(items <= kMaxSelectorItems, "pdb: the selector within its budget");
    Require(!selector.unreadable || selector.requirements.empty(),
            "pdb: an unreadable selector keeps no requirement");
    Require(budget.disruptions_allowed >= 0, "pdb: disruptionsAllowed at least 0");
    Require(budget.has_status || budget.disruptions_allowed == 0,
            "pdb: without status, no disruption allowed");
    // An unreadable selector protects its whole namespace; none protects nothing.
    PodInfo pod;
    pod.namespace_name = budget.namespace_name;
    if (selector.unreadable) Require(budget.Selects(pod), "pdb: unreadable selects all");
    if (!selector.present) Require(!budget.Selects(pod), "pdb: no selector selects none");
  });
}

void CheckGroupSizeDecoder(std::string_view input) {
  // The input's first byte picks the kind; the rest is the object.
  if (input.empty()) return;
  constexpr GroupSizeKind kKinds[] = {GroupSizeKind::kJob,      GroupSizeKind::kPodGroup,
                                      GroupSizeKind::kWorkload, GroupSizeKind::kVolcano,
                                      GroupSizeKind::kKai,      GroupSizeKind::kCoscheduling};
  const GroupSizeKind kind = kKinds[static_cast<unsigned char>(input.front()) % 6];
  input.remove_prefix(1);
  DecodeObject(input, [&](simdjson::ondemand::object o) {
    const StatedGroupSizes stated = DecodeStatedGroupSizes(kind, o);
    Require(stated.sizes.size() <= kMaxWorkloadPodGroups, "group size: at most 8 sizes an object");
    for (const StatedGroupSize& s : stated.sizes) {
      Require(s.size >= 1 && s.size <= kMaxGroupSize, "group size: within 1..kMaxGroupSize");
      Require(!s.key.empty() && s.key.size() <= kMaxGroupKeyBytes, "group size: a bounded key");
      const std::string source = "/" + std::string(GroupSourceOf(kind)) + "/";
      Require(s.key.find(source) != std::string::npos, "group size: keyed by its kind's source");
    }
  });
}

namespace {

// Devices as NVIDIA's driver publishes them: a full A100 and one of its MIG devices, and one whose
// version attribute does not parse.
const std::vector<DraDevice>& SampleDraDevices() {
  static const std::vector<DraDevice> devices = [] {
    using Kind = DraValue::Kind;
    auto text = [](Kind kind, std::string t) { return DraValue{kind, 0, false, std::move(t)}; };
    DraDevice gpu{"gpu-0", {}, {{"gpu.nvidia.com/memory", int64_t{81920} << 20}}, {}};
    gpu.attributes = {{"gpu.nvidia.com/type", text(Kind::kString, "gpu")},
                      {"gpu.nvidia.com/productName", text(Kind::kString, "NVIDIA A100-SXM4-80GB")},
                      {"gpu.nvidia.com/cudaComputeCapability", text(Kind::kVersion, "8.0.0")},
                      {"gpu.nvidia.com/driverVersion", text(Kind::kVersion, "550.54.15")},
                      {"gpu.nvidia.com/index", DraValue{Kind::kInt, 0, false, ""}},
                      {"example.com/shared", DraValue{Kind::kBool, 0, true, ""}}};
    DraDevice mig = gpu;
    mig.name = "gpu-0-mig-1g10gb-0";
    mig.attributes["gpu.nvidia.com/type"] = text(Kind::kString, "mig");
    mig.attributes["gpu.nvidia.com/profile"] = text(Kind::kString, "1g.10gb");
    mig.capacity["gpu.nvidia.com/memory"] = int64_t{9856} << 20;
    DraDevice odd = gpu;
    odd.attributes["gpu.nvidia.com/driverVersion"] = text(Kind::kVersion, "550.54");
    return std::vector<DraDevice>{gpu, mig, odd};
  }();
  return devices;
}

void CheckDraSelector(std::string_view expression) {
  const DraSelector selector = DraSelector::Compile(expression);
  Require(selector.supported() == selector.unsupported_reason().empty(),
          "dra: a reason exactly when the selector is unsupported");
  Require(!selector.supported() || expression.size() <= kMaxDraSelectorBytes,
          "dra: a supported selector within kMaxDraSelectorBytes");
  for (const DraDevice& device : SampleDraDevices()) {
    std::optional<bool> first = selector.Matches(kNvidiaDraDriver, device);
    Require(selector.supported() || !first, "dra: an unsupported selector answers nothing");
    Require(first == selector.Matches(kNvidiaDraDriver, device), "dra: the same answer twice");
  }
}

void CheckDraRequest(const DraDeviceRequest& r, bool alternative) {
  Require(r.count >= 1 && r.count <= (int64_t{1} << 31), "dra: counts within 1..2^31");
  Require(r.first_available.size() <= kMaxDraRequestsPerClaim, "dra: alternatives within bound");
  Require(!alternative || r.first_available.empty(), "dra: alternatives do not nest");
  for (const std::string& s : r.selectors) CheckDraSelector(s);
  for (const DraDeviceRequest& sub : r.first_available) CheckDraRequest(sub, true);
}

}  // namespace

void CheckDraDecoder(std::string_view input) {
  DecodeObject(input, [](simdjson::ondemand::object o) {
    const DraSlice slice = DecodeDraSlice(o);
    Require(slice.devices.size() <= kMaxDraDevicesPerSlice, "dra: devices within their bound");
    Require(slice.pool_slice_count >= 1 && slice.pool_generation >= 0, "dra: a valid pool");
    for (const DraDevice& d : slice.devices) {
      Require(d.attributes.size() + d.capacity.size() <= kMaxDraAttributesPerDevice,
              "dra: attributes and capacities within their bound");
      for (const auto& [name, value] : d.attributes) {
        Require(name.find('/') != std::string::npos, "dra: attribute names qualified");
      }
      for (const auto& [name, milli] : d.capacity) {
        Require(name.find('/') != std::string::npos && milli >= 0, "dra: capacities qualified");
      }
      // What a decoded device holds, read by selectors of every kind.
      static const DraSelector kDriver = DraSelector::Compile("device.driver == 'gpu.nvidia.com'");
      static const DraSelector kMixed = DraSelector::Compile(
          "device.attributes['gpu.nvidia.com'].type == 'gpu' || "
          "device.capacity['gpu.nvidia.com'].memory.compareTo(quantity('40Gi')) >= 0 || "
          "device.attributes['gpu.nvidia.com'].cudaComputeCapability.isLessThan(semver('8.0.0'))"
          " || ('index' in device.attributes['gpu.nvidia.com'] && "
          "device.attributes['gpu.nvidia.com'].index > 3)");
      Require(kDriver.Matches(slice.driver, d).has_value(), "dra: device.driver always reads");
      Require(
          kMixed.supported() && kMixed.Matches(slice.driver, d) == kMixed.Matches(slice.driver, d),
          "dra: a decoded device gets the same answer twice");
    }
  });
  DecodeObject(input, [](simdjson::ondemand::object o) {
    DraSlice slice = DecodeDraSlice(o);
    // Kept as the ledger keeps it: every device by name, counter sets by name, kinds shared.
    static DraKindInterner kinds;
    const size_t devices = slice.devices.size();
    const DraStoredSlice stored = StoreSlice(std::move(slice), kinds);
    Require(stored.devices.size() == devices, "dra: every device stored");
    for (const DraStoredDevice& d : stored.devices) {
      Require(d.kind != nullptr && d.kind->consumes.empty(), "dra: a device's kind, no amounts");
      Require(stored.SetsOf(d).size() == d.sets_count, "dra: counter sets by name");
    }
  });
  DecodeObject(input, [](simdjson::ondemand::object o) {
    DraClaim claim = DecodeDraClaim(o);
    Require(claim.requests.size() <= kMaxDraRequestsPerClaim, "dra: requests within their bound");
    Require(claim.allocated || claim.results.empty(), "dra: results only when allocated");
    for (const DraDeviceRequest& r : claim.requests) CheckDraRequest(r, false);
    // Through a ledger of full GPUs and MIG devices: kept within its byte bound, judged within
    // the work bound, the same way twice, named twice as once.
    DraLedger dra;
    DraSlice node{"n-gpu", std::string(kNvidiaDraDriver), "n", 1, 1, "n", SampleDraDevices(), {}};
    dra.Upsert(std::move(node));
    dra.Upsert(DraDeviceClass{"gpu.nvidia.com", {"device.driver == 'gpu.nvidia.com'"}, ""});
    claim.namespace_name = "default";
    claim.name = "c";
    for (auto& r : claim.requests) r.device_class = "gpu.nvidia.com";
    dra.Upsert(std::move(claim));
    const DraClaimEntry* entry = dra.FindClaim("default", "c");
    Require(entry != nullptr, "dra: a claim is kept");
    Require(entry->bytes <= kMaxDraClaimBytes || !entry->requests_dropped.empty(),
            "dra: a claim kept whole within its byte bound");
    Require(entry->requests.size() == entry->claim.requests.size(), "dra: requests compiled");
    PodInfo pod;
    pod.namespace_name = "default";
    pod.name = "p";
    pod.claims = {PodClaimRef{"a", "c", false}};
    auto catalog = dra.Catalog();
    const DraDemand once = DraDemandOf(pod, *catalog);
    pod.claims.push_back(PodClaimRef{"b", "c", false});
    const DraDemand twice = DraDemandOf(pod, *catalog);
    Require(once.modelled == twice.modelled && once.requests == twice.requests,
            "dra: a claim named twice is judged once");
    Require(once.modelled || once.requests.empty(), "dra: an unmodelled claim asks for nothing");
  });
  DecodeObject(input, [](simdjson::ondemand::object o) {
    for (const std::string& s : DecodeDraDeviceClass(o).selectors) CheckDraSelector(s);
  });
  CheckDraSelector(input);
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
  Validated<PolicySpec> parsed = ParsePolicy(input, "fuzz.yaml");
  for (const auto& e : parsed.problems.lines()) {
    Require(e.starts_with("fuzz.yaml"), "policy: every error names the file");
    Require(e.find('\n') == std::string::npos, "policy: every error is one line");
  }
  if (!parsed.ok()) return;
  std::string formatted = FormatPolicy(parsed.value);
  Validated<PolicySpec> again = ParsePolicy(formatted, "formatted.yaml");
  Require(again.ok(), "policy: FormatPolicy's text parses");
  Require(FormatPolicy(again.value) == formatted,
          "policy: FormatPolicy's text reads back the same");
  try {
    Policy policy(std::move(parsed.value));
  } catch (const InputError&) {
  }
}

// Nodes and pods a simulation of a fuzz input may hold: enough to place, share and fail pods,
// few enough that a run takes milliseconds.
constexpr size_t kFuzzSimNodes = 8;
constexpr double kFuzzSimPods = 400;

// What the simulate command would run on `nodes` and `pods` (it refuses a cluster without a GPU and
// a workload tuned past its bound), when small enough for a fuzzer: the gpusched policy alone, and
// as the README registers it beside kube-scheduler's LeastAllocated and MostAllocated (blend mode,
// kube-scheduler's integer score arithmetic); every pod placed or failed, the allocated share a
// share. `what` names the check in its messages.
void SimulateIfSmall(const std::vector<TraceNode>& nodes, const std::vector<TracePod>& pods,
                     const std::string& what) {
  const int64_t capacity = GpuCapacityMilli(nodes);
  if (nodes.size() > kFuzzSimNodes || capacity <= 0 || pods.empty() ||
      ExpectedPreparedPods(pods, capacity) > kFuzzSimPods) {
    return;
  }
  const SimPolicy gpusched = *BuiltinSimPolicy("gpusched");
  for (auto blend : {std::optional<InTreeScore>(), std::optional(InTreeScore::kLeastAllocated),
                     std::optional(InTreeScore::kMostAllocated)}) {
    SimOptions options;
    options.seed = 1;
    options.blend.enabled = blend.has_value();
    options.blend.in_tree = blend.value_or(InTreeScore::kLeastAllocated);
    options.blend.extender_weight = 5;
    SimRun run = Simulate(nodes, pods, gpusched, options);
    Require(run.pods_placed + run.pods_failed == run.pods,
            (what + ": every pod placed or failed").c_str());
    Require(run.allocated_at_end_pct >= 0 && run.allocated_at_end_pct <= 100.0 + 1e-9,
            (what + ": the allocated share is a share").c_str());
  }
}

void CheckScenarioReader(std::string_view input) {
  try {
    Scenario scenario = ParseScenario(input, "fuzz.yaml");
    Require(!scenario.nodes.empty(), "scenario: at least one node");
    SimulateIfSmall(scenario.nodes, scenario.pods, "scenario");
  } catch (const TraceError&) {
  }
}

bool OnePrintableLine(std::string_view message) {
  return std::all_of(message.begin(), message.end(), [](char c) { return c >= 0x20 && c < 0x7f; });
}

// One openb list read by `parse`, or nullopt when refused with a one-line TraceError naming the
// file.
template <class Parse>
auto ReadOpenb(Parse parse, std::string_view text) -> std::optional<decltype(parse(text))> {
  try {
    return parse(text);
  } catch (const TraceError& e) {
    Require(std::string_view(e.what()).starts_with("fuzz.csv"),
            "openb: every error names the file");
    Require(OnePrintableLine(e.what()), "openb: every error is one printable line");
    return std::nullopt;
  }
}

void CheckOpenbTrace(std::string_view input) {
  const size_t split = input.find("\n--\n");
  const std::string_view node_text = input.substr(0, split);
  const std::string_view pod_text =
      split == std::string_view::npos ? input : input.substr(split + 4);
  auto nodes =
      ReadOpenb([](std::string_view t) { return ParseOpenbNodes(t, "fuzz.csv"); }, node_text);
  auto pods = ReadOpenb([](std::string_view t) { return ParseOpenbPods(t, "fuzz.csv"); }, pod_text);
  if (nodes) {
    std::set<std::string> names;
    for (const TraceNode& n : *nodes) {
      Require(!n.name.empty() && names.insert(n.name).second, "openb: node names present, unique");
      Require(n.gpus >= 0 && n.gpus <= 64 && (n.gpus == 0 || !n.model.empty()),
              "openb: 0..64 GPUs, a model for every node with GPUs");
    }
  }
  if (pods) {
    for (const TracePod& p : *pods) {
      Require(p.gpu_milli >= 0 && p.gpu_milli <= 1000 && (p.num_gpu == 0) == (p.gpu_milli == 0) &&
                  (p.num_gpu <= 1 || p.gpu_milli == 1000),
              "openb: a share only of one GPU, 1000 per GPU beyond it");
    }
  }
  if (nodes && pods && split != std::string_view::npos) SimulateIfSmall(*nodes, *pods, "openb");
}

void CheckMigLayoutsReader(std::string_view input) {
  Validated<MigLayouts> parsed = ParseMigLayouts(input, "fuzz.yaml");
  for (const auto& e : parsed.problems.lines()) {
    Require(e.starts_with("fuzz.yaml"), "mig layouts: every error names the file");
    Require(e.find('\n') == std::string::npos, "mig layouts: every error is one line");
  }
  if (!parsed.ok()) return;
  Require(!parsed.value.layouts.empty(), "mig layouts: at least one layout");
  for (const auto& [name, layout] : parsed.value.layouts) {
    Require(!name.empty() && name.size() <= 63 && name.find(' ') == std::string::npos,
            "mig layouts: names are label values");
    for (const char* product : {"A100-SXM4-40GB", "A100-SXM4-80GB", "H100-80GB-HBM3"}) {
      GpuLabels labels;
      labels.product = product;
      const MigGpuModel& model = *MigModelOf(labels);
      for (int64_t gpus : {1, 8}) {
        auto offer = OfferOf(layout, model, gpus);
        if (!offer) continue;
        int64_t compute = 0;
        for (const auto& [profile, n] : offer->slices) {
          Require(n > 0, "mig layouts: offered slices are positive");
          compute += n * MigComputeSlices(profile);
        }
        Require(offer->whole_gpus <= gpus && compute <= (gpus - offer->whole_gpus) * 7,
                "mig layouts: an offer fits the node's GPUs");
      }
    }
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

namespace {

// Small enough that inputs of a few hundred bytes reach every limit (the default maximum input of
// libFuzzer is 4,096 bytes): the header size, the header count, and a body after dechunking.
constexpr HttpLimits kFuzzHttpLimits{
    .max_header_bytes = 256, .max_headers = 8, .max_body_bytes = 1024};

// One thing the parser reported: a complete request or the error, and after how many input bytes.
struct HttpEvent {
  size_t at = 0;
  bool failed = false;
  int status = 0;
  std::string error;
  HttpRequest request;

  auto Fields() const {
    const HttpRequest& r = request;
    return std::tie(failed, status, error, r.method, r.target, r.minor_version, r.headers, r.body,
                    r.keep_alive, r.expects_continue);
  }
};

struct HttpRun {
  std::vector<HttpEvent> events;
  bool started = false;  // a partial request left when the input ended
  bool header_complete = false;
};

// What every request read must satisfy, however it arrived.
void CheckHttpRequest(const HttpRequest& r) {
  const HttpLimits& limits = kFuzzHttpLimits;
  Require(r.minor_version == 0 || r.minor_version == 1, "http: HTTP/1.0 or HTTP/1.1");
  Require(!r.method.empty() && !r.target.empty(), "http: a method and a target");
  Require(r.headers.size() <= limits.max_headers, "http: at most max_headers header fields");
  Require(r.body.size() <= limits.max_body_bytes, "http: a body within max_body_bytes");
  // The shortest header spelling this request: its request line, "name:value" lines, a CRLF.
  size_t header_bytes = r.method.size() + r.target.size() + 12 + 2;
  for (const auto& [name, value] : r.headers) {
    header_bytes += name.size() + value.size() + 3;
    Require(std::none_of(name.begin(), name.end(), [](char c) { return c >= 'A' && c <= 'Z'; }),
            "http: header names lower-cased");
    Require(value.find_first_of("\r\n") == std::string::npos, "http: no line end in a value");
  }
  Require(header_bytes <= limits.max_header_bytes, "http: a header within max_header_bytes");
  std::string_view length = r.header("content-length");
  if (!length.empty()) {
    size_t n = 0;
    auto [end, ec] = std::from_chars(length.data(), length.data() + length.size(), n);
    Require(ec == std::errc() && end == length.data() + length.size() && r.body.size() == n,
            "http: a body of its Content-Length");
  }
}

// Feeds `input` in pieces of `chunk` bytes (the last one shorter) as the transport does: after a
// complete request its body is dropped and Reset() reads on from the bytes already received.
HttpRun FeedHttp(std::string_view input, size_t chunk) {
  HttpRun run;
  // Never refuses (no 503): the feedings must agree, and only the budget's accounting is checked.
  RequestBudget budget(size_t{1} << 40, kFuzzHttpLimits.max_body_bytes);
  {
    HttpRequestParser parser(kFuzzHttpLimits, &budget);
    auto check_budget = [&] {
      Require(budget.used() == parser.held(), "http: the budget holds what the parser holds");
    };
    using State = HttpRequestParser::State;
    State state = State::kNeedMore;
    size_t fed = 0;
    while (fed < input.size() && state == State::kNeedMore) {
      size_t n = std::min(chunk, input.size() - fed);
      state = parser.Feed(input.substr(fed, n));
      fed += n;
      check_budget();
      while (state == State::kComplete) {
        CheckHttpRequest(parser.request());
        HttpEvent& e = run.events.emplace_back();
        e.at = fed;
        e.request = parser.request();
        parser.DropBody();
        check_budget();
        state = parser.Reset();
        check_budget();
      }
      if (state == State::kFailed) {
        Require(parser.Feed("x") == State::kFailed, "http: a failed parser stays failed");
        const std::string& error = parser.error();
        Require(!error.empty() && error.find_first_of("\r\n") == std::string::npos,
                "http: an error is one line");
        HttpEvent& e = run.events.emplace_back();
        e.at = fed;
        e.failed = true;
        e.status = parser.error_status();
        e.error = error;
      }
    }
    run.started = parser.started();
    run.header_complete = parser.header_complete();
  }
  Require(budget.used() == 0, "http: a parser gives its budget back");
  return run;
}

// Prints a feeding's events next to the byte-by-byte ones, for the report of a failed check.
void PrintHttpRuns(size_t chunk, const HttpRun& run, const HttpRun& bytewise) {
  for (const auto* r : {&bytewise, &run}) {
    std::fprintf(stderr, "http: in pieces of %zu bytes:\n", r == &run ? chunk : 1);
    for (const HttpEvent& e : r->events) {
      std::fprintf(stderr, "  after %zu bytes: %d %s%s %s\n", e.at, e.status, e.error.c_str(),
                   e.request.method.c_str(), e.request.target.c_str());
    }
  }
}

}  // namespace

void CheckHttpRequestParser(std::string_view input) {
  static constexpr int kStatuses[] = {400, 413, 415, 417, 431, 501, 505};
  const HttpRun bytewise = FeedHttp(input, 1);
  for (const HttpEvent& e : bytewise.events) {
    Require(!e.failed || std::find(std::begin(kStatuses), std::end(kStatuses), e.status) !=
                             std::end(kStatuses),
            "http: an error status the parser documents");
  }
  for (size_t chunk :
       {size_t{2}, size_t{3}, size_t{7}, size_t{64}, std::max<size_t>(input.size(), 1)}) {
    const HttpRun run = FeedHttp(input, chunk);
    // Each reported with the piece that brings the byte it waited for, not later.
    auto due = [&](size_t at) { return std::min((at + chunk - 1) / chunk * chunk, input.size()); };
    bool same = run.events.size() == bytewise.events.size() && run.started == bytewise.started &&
                run.header_complete == bytewise.header_complete;
    for (size_t i = 0; same && i < run.events.size(); ++i) {
      same = run.events[i].Fields() == bytewise.events[i].Fields() &&
             run.events[i].at == due(bytewise.events[i].at);
    }
    if (!same) PrintHttpRuns(chunk, run, bytewise);
    Require(same,
            "http: the same requests and error, at the same point, whatever the piece size (each "
            "with the piece that brings its last byte; the same partial request at the end)");
  }
}

std::span<const FuzzCheck> AllFuzzChecks() {
  static constexpr FuzzCheck kChecks[] = {
      {"extender_request", CheckExtenderRequest},
      {"pod", CheckPodDecoder},
      {"node", CheckNodeDecoder},
      {"pdb", CheckPdbDecoder},
      {"group_size", CheckGroupSizeDecoder},
      {"admission", CheckAdmissionReview},
      {"dra", CheckDraDecoder},
      {"yaml_to_json", CheckYamlToJson},
      {"policy", CheckPolicyReader},
      {"scenario", CheckScenarioReader},
      {"openb", CheckOpenbTrace},
      {"mig_layouts", CheckMigLayoutsReader},
      {"quantity", CheckQuantity},
      {"kubeconfig", CheckKubeconfigReader},
      {"watch_stream", CheckWatchStream},
      {"http_request", CheckHttpRequestParser},
  };
  return kChecks;
}

}  // namespace gpusched::fuzz
