// Longer than 500 lines: the demand, the candidates and the greedy planner of both MIG strategies
// share one set of private helpers and one planner state.
#include "gpusched/planning/mig_advice.h"

#include <algorithm>
#include <cctype>
#include <deque>
#include <optional>
#include <tuple>

#include "gpusched/model/gpu_facts.h"
#include "gpusched/model/gpu_labels.h"
#include "gpusched/model/gpu_requirements.h"
#include "gpusched/model/gpu_resources.h"
#include "gpusched/model/node_pins.h"
#include "gpusched/planning/kube_names.h"
#include "gpusched/util/text.h"

namespace gpusched {
namespace {

// Skip reasons, a fixed set so the report stays bounded.
constexpr std::string_view kNotMigCapable = "not MIG-capable";
constexpr std::string_view kUnknownModel = "GPU model without known MIG profiles";
constexpr std::string_view kCordoned = "cordoned";
constexpr std::string_view kMigChanging = "MIG change in progress or failed";
constexpr std::string_view kInUse = "GPU pods running";
constexpr std::string_view kBadName = "name not a DNS subdomain";
constexpr std::string_view kNoLayout = "no other layout applies";
constexpr std::string_view kTooManyGpus = "more GPUs than MIG advice considers (64)";
constexpr std::string_view kTooManyKinds = "beyond 256 kinds of candidate node";

// Whether no bound pod holds a GPU resource of `gpu_names` (the policy's) on the node.
bool Idle(const NodeState& node, const GpuResourceNames& gpu_names) {
  return node.gpu_pod_count == 0 && !HoldsGpuResource(node.used, gpu_names);
}

bool MigChanging(const GpuLabels& gpu) {
  return gpu.mig_config_state == MigConfigState::kPending ||
         gpu.mig_config_state == MigConfigState::kRebooting ||
         gpu.mig_config_state == MigConfigState::kFailed;
}

constexpr std::string_view kMigInProduct = "-MIG-";

// Whether the node's nvidia.com/gpu units are whole, unshared GPUs.
bool WholeGpus(const NodeInfo& node) {
  return node.gpu.single_mig_profile().empty() &&
         SharingOf(node, kGpuResource) == SharingStrategy::kNone;
}

bool SingleStrategy(const NodeInfo& node) { return node.gpu.mig_strategy == MigStrategy::kSingle; }

// A GPU product without GFD's "-MIG-<profile>" part: "NVIDIA-A100-SXM4-80GB".
std::string_view BaseProduct(std::string_view product) {
  return product.substr(0, product.find(kMigInProduct));
}

// How a slice is named under the single strategy: the product GFD writes for a GPU of `base`
// cut into `profile` ("NVIDIA-H100-80GB-HBM3-MIG-1g.10gb"); pods ask for it as nvidia.com/gpu.
std::string SingleSliceKey(std::string_view base, std::string_view profile) {
  return std::string(base) + std::string(kMigInProduct) + std::string(profile);
}

// The MIG profile a demand or offer key names: a mixed profile as is, a single product's profile.
std::string_view ProfileOfKey(std::string_view key) {
  return key.find(kMigInProduct) == std::string_view::npos ? key : MigProfileOfProduct(key);
}

// A product a pod can pin that names a MIG slice: "<model>-MIG-<profile>", no glob, not shared.
bool IsMigProduct(std::string_view product) {
  int compute = MigComputeSlices(MigProfileOfProduct(product));
  return product.find_first_of("*?[") == std::string_view::npos && !product.ends_with("-SHARED") &&
         compute >= 1 && compute <= kMigComputeSlicesPerGpu;
}

// The one MIG product a pod's nvidia.com/gpu is pinned to (the single strategy's slices), or "":
// a nodeSelector on nvidia.com/gpu.product, an In of one value in its only required node-affinity
// term, or gpusched.io/gpu-product naming one product.
std::string SingleMigProductOf(const PodInfo& pod) {
  auto one = [](const PinRequirement& r) {
    return r.key == kGfdProduct && r.op == PinOperator::kIn && r.values.size() == 1 &&
           IsMigProduct(r.values[0]);
  };
  for (const PinRequirement& r : pod.pins.selector) {
    if (one(r)) return r.values[0];
  }
  if (pod.pins.required.size() == 1) {
    for (const PinRequirement& r : pod.pins.required[0].requirements) {
      if (one(r)) return r.values[0];
    }
  }
  if (const std::string* v = pod.annotation(kGpuProductAnnotation)) {
    std::vector<std::string> products = SplitList(*v);
    if (products.size() == 1 && IsMigProduct(products[0])) return products[0];
  }
  return "";
}

// Free units of `resource` on `node`, 0..kMaxGpusPerNode.
int64_t FreeUnits(const NodeState& node, std::string_view resource) {
  return std::clamp<int64_t>(node.free_milli(resource) / 1000, 0, kMaxGpusPerNode);
}

// What the node offers now (allocatable): whole GPUs and unshared MIG slices (under the single
// strategy, nvidia.com/gpu of a MIG product, keyed by that product).
MigNodeOffer CurrentOffer(const NodeInfo& node) {
  MigNodeOffer offer;
  for (const auto& r : node.allocatable) {
    int64_t units = std::clamp<int64_t>(r.milli / 1000, 0, kMaxGpusPerNode);
    if (units == 0) continue;
    if (r.name == kGpuResource && WholeGpus(node)) {
      offer.whole_gpus = units;
    } else if (r.name == kGpuResource && !node.gpu.single_mig_profile().empty()) {
      if (SharingOf(node, kGpuResource) != SharingStrategy::kNone) continue;
      offer.slices[SingleSliceKey(BaseProduct(node.gpu.product), node.gpu.single_mig_profile())] =
          units;
    } else if (IsMigSliceResource(r.name)) {
      offer.slices[std::string(MigProfileOf(r.name))] += units;
    }
  }
  return offer;
}

// Under the single strategy, the slices of the node's profile one of its GPUs holds: as its current
// layout cuts one GPU, else the most of that profile a GPU of `model` holds; 0 when unknown.
int64_t SingleSlicesPerGpu(const NodeInfo& node, const MigGpuModel& model,
                           const MigLayouts& layouts) {
  std::string_view profile = node.gpu.single_mig_profile();
  auto layout = layouts.layouts.find(node.gpu.mig_config);
  if (layout != layouts.layouts.end()) {
    std::optional<MigNodeOffer> one = OfferOf(layout->second, model, 1);
    if (one && one->whole_gpus == 0 && one->slices.size() == 1 &&
        one->slices.begin()->first == profile) {
      return one->slices.begin()->second;
    }
  }
  for (const MigProfileShape& p : model.profiles) {
    if (ResourceProfileOf(p.name) == profile) return p.max_count;
  }
  return 0;
}

// Physical GPUs: under the single strategy with slices, the slices over the slices per GPU (its
// count label counts slices); else the count label, else whole GPUs plus the slices' GPUs rounded
// up.
int64_t PhysicalGpus(const NodeInfo& node, const MigGpuModel& model, const MigNodeOffer& current,
                     const MigLayouts& layouts) {
  if (!node.gpu.single_mig_profile().empty()) {
    int64_t per_gpu = SingleSlicesPerGpu(node, model, layouts);
    int64_t slices = 0;
    for (const auto& [key, n] : current.slices) slices += n;
    return per_gpu > 0 ? (slices + per_gpu - 1) / per_gpu : 0;
  }
  if (node.gpu.count && *node.gpu.count > 0) return std::min(*node.gpu.count, kMaxGpusPerNode);
  int64_t compute = 0;
  for (const auto& [profile, n] : current.slices) compute += MigComputeSlices(profile) * n;
  return current.whole_gpus + (compute + kMigComputeSlicesPerGpu - 1) / kMigComputeSlicesPerGpu;
}

// Pending whole-GPU pods (largest first) placed best-fit onto nodes with `free` whole GPUs
// (free count -> nodes): how many fit.
int64_t WholeGpuPodsFit(const std::vector<int64_t>& pods_desc, std::map<int64_t, int64_t> free) {
  int64_t placed = 0;
  for (int64_t need : pods_desc) {
    auto it = free.lower_bound(need);
    if (it == free.end()) continue;
    int64_t left = it->first - need;
    if (--it->second == 0) free.erase(it);
    ++free[left];
    ++placed;
  }
  return placed;
}

void Move(std::map<int64_t, int64_t>& free, int64_t from, int64_t to) {
  if (from == to) return;
  auto it = free.find(from);
  if (it != free.end() && --it->second == 0) free.erase(it);
  ++free[to];
}

// What `offer` is on a node under the single strategy whose GPUs are `base`: its slices keyed as
// SingleSliceKey names them; nullopt where the device plugin would not start (more than one
// profile, MIG-enabled GPUs beside whole ones, MIG enabled with no slice).
std::optional<MigNodeOffer> SingleStrategyOffer(const MigNodeOffer& offer, std::string_view base) {
  if (offer.slices.empty()) {
    return offer.whole_gpus > 0 ? std::optional<MigNodeOffer>(offer) : std::nullopt;
  }
  if (offer.slices.size() > 1 || offer.whole_gpus > 0) return std::nullopt;
  MigNodeOffer out;
  out.slices[SingleSliceKey(base, offer.slices.begin()->first)] = offer.slices.begin()->second;
  return out;
}

// Candidate nodes of equal model, GPU count, strategy, GPU product (single), current layout and
// offer.
struct NodeClass {
  const MigGpuModel* model = nullptr;
  int64_t gpus = 0;
  std::optional<std::string> single_base;  // the GPU product under the single strategy
  std::string current_layout;
  MigNodeOffer current;
  std::deque<std::string> nodes;                             // by name, not advised yet
  std::vector<std::pair<std::string, MigNodeOffer>> offers;  // by layout name
};

struct Option {
  size_t cls = 0;
  size_t offer = 0;
  int64_t gain = 0;
  int64_t headroom = 0;  // slices of the waited-for profiles the node offers after the change
  double observed = 0;   // ObservedMatch
  int64_t whole = 0;
};

int64_t Get(const std::map<std::string, int64_t>& m, const std::string& key) {
  auto it = m.find(key);
  return it == m.end() ? 0 : it->second;
}

// The waiting slices `cls` changing to `offer` serves more (or fewer, negative), per profile.
std::map<std::string, int64_t> Deltas(const NodeClass& cls, const MigNodeOffer& offer,
                                      const std::map<std::string, int64_t>& waiting,
                                      const std::map<std::string, int64_t>& free) {
  std::map<std::string, int64_t> deltas;
  auto add = [&](const std::string& p) {
    int64_t want = Get(waiting, p);
    if (want == 0 || deltas.count(p)) return;
    int64_t now = Get(free, p);
    int64_t after = now - Get(cls.current.slices, p) + Get(offer.slices, p);
    deltas[p] = std::min(want, after) - std::min(want, now);
  };
  for (const auto& [p, n] : cls.current.slices) add(p);
  for (const auto& [p, n] : offer.slices) add(p);
  return deltas;
}

// The observed MIG workload's shares per profile, summing to 1 (empty when none was seen).
std::map<std::string, double> ObservedMigShares(const ClusterSnapshot& snapshot) {
  std::map<std::string, double> shares;
  double total = 0;
  for (const auto& w : snapshot.observed_workload()) {
    if (!w.shape.wants_mig() || w.weight <= 0) continue;
    shares[w.shape.mig_profile] += w.weight;
    total += w.weight;
  }
  for (auto& [p, share] : shares) share /= total;
  return shares;
}

// How well `offer`'s slices match the observed MIG workload: the overlap of the two mixes, each
// profile's share of the offer's GPU equivalents against its observed share (0..1).
double ObservedMatch(const MigNodeOffer& offer, const std::map<std::string, double>& shares) {
  if (shares.empty()) return 0;
  int64_t total = 0;
  for (const auto& [key, n] : offer.slices)
    total += MigSliceMilli(n, MigComputeSlices(ProfileOfKey(key)));
  if (total == 0) return 0;
  double match = 0;
  for (const auto& [key, n] : offer.slices) {
    auto s = shares.find(std::string(ProfileOfKey(key)));
    if (s == shares.end()) continue;
    double part =
        static_cast<double>(MigSliceMilli(n, MigComputeSlices(ProfileOfKey(key)))) / total;
    match += std::min(part, s->second);
  }
  return match;
}

// Why a GPU node could not be changed (see mig_advice.h), or nullopt; its model and the layout
// aside.
std::optional<std::string_view> Unchangeable(const NodeState& state, const MigNodeOffer& current,
                                             const GpuResourceNames& gpu_names) {
  const NodeInfo& node = state.info;
  if (node.gpu.mig_capable == false || (!node.gpu.mig_capable && current.slices.empty())) {
    return kNotMigCapable;
  }
  if (node.unschedulable) return kCordoned;
  if (MigChanging(node.gpu)) return kMigChanging;
  if (!Idle(state, gpu_names)) return kInUse;
  return std::nullopt;
}

// Why a GPU node is no candidate, or nullopt when it is one (see mig_advice.h).
std::optional<std::string_view> NotACandidate(const NodeState& state, const MigGpuModel* model,
                                              const MigNodeOffer& current,
                                              const MigLayouts& layouts,
                                              const GpuResourceNames& gpu_names) {
  const NodeInfo& node = state.info;
  if (model == nullptr) return kUnknownModel;
  if (auto reason = Unchangeable(state, current, gpu_names)) return reason;
  if (!IsDnsSubdomain(node.name)) return kBadName;
  int64_t gpus = PhysicalGpus(node, *model, current, layouts);
  if (gpus > kMaxMigAdviceGpusPerNode) return kTooManyGpus;
  if (gpus <= 0) return kNoLayout;
  return std::nullopt;
}

using LayoutOffers = std::vector<std::pair<std::string, MigNodeOffer>>;

// The greedy choice of mig_advice.h: the candidates by class, the free slices and free whole GPUs
// as the changes so far leave them, and the next change.
class MigPlanner {
 public:
  MigPlanner(const MigLayouts& layouts, const MigDemand& demand, const GpuResourceNames& gpu_names,
             std::map<std::string, double> shares)
      : layouts_(layouts),
        demand_(demand),
        gpu_names_(gpu_names),
        shares_(std::move(shares)),
        whole_pods_(demand.whole_gpu_pods) {
    std::sort(whole_pods_.begin(), whole_pods_.end(), std::greater<>());
  }

  // Counts free slices and whole GPUs, and sorts GPU nodes into candidates (by class) and skipped;
  // fills out's free_slices, whole_gpu_pods_fit, candidates and skipped.
  void ReadNodes(const ClusterSnapshot& snapshot, MigAdvice& out) {
    std::vector<const NodeState*> nodes;
    for (const auto& n : snapshot.nodes()) nodes.push_back(n.get());
    std::sort(nodes.begin(), nodes.end(),
              [](const NodeState* a, const NodeState* b) { return a->info.name < b->info.name; });
    for (const NodeState* state : nodes) {
      MigNodeOffer current = CurrentOffer(state->info);
      if (!state->info.unschedulable && !MigChanging(state->info.gpu))
        CountFree(*state, current, out);
      if (current.whole_gpus == 0 && current.slices.empty()) continue;  // no GPU node
      const MigGpuModel* model = MigModelOf(state->info.gpu);
      std::optional<std::string_view> reason =
          NotACandidate(*state, model, current, layouts_, gpu_names_);
      if (!reason) reason = AddCandidate(state->info, model, current);
      if (reason) {
        ++out.skipped[std::string(*reason)];
      } else {
        ++out.candidates;
        if (SingleStrategy(state->info)) ++out.single_candidates;
      }
    }
    free_ = out.free_slices;
    baseline_ = out.whole_gpu_pods_fit = WholeGpuPodsFit(whole_pods_, whole_free_);
  }

  // The best change that serves more waiting slices and keeps the whole-GPU pods that fit, applied
  // to the state; nullopt when there is none.
  std::optional<MigNodeAdvice> NextChange() {
    std::vector<Option> options = Options();
    for (const Option& o : options) {
      std::map<int64_t, int64_t> after = whole_free_;
      Move(after, classes_[o.cls].current.whole_gpus, o.whole);
      if (WholeGpuPodsFit(whole_pods_, after) < baseline_) continue;
      whole_free_ = std::move(after);
      return Apply(o);
    }
    return std::nullopt;
  }

  const std::map<std::string, int64_t>& free() const { return free_; }

 private:
  void CountFree(const NodeState& state, const MigNodeOffer& current, MigAdvice& out) {
    bool single = !state.info.gpu.single_mig_profile().empty();
    for (const auto& [key, n] : current.slices) {
      int64_t free = FreeUnits(
          state, single ? std::string(kGpuResource) : std::string(kMigResourcePrefix) + key);
      if (free > 0) out.free_slices[key] += free;
    }
    if (current.whole_gpus > 0) ++whole_free_[FreeUnits(state, kGpuResource)];
  }

  // Puts a candidate into its class; the reason it is no candidate after all, if any.
  std::optional<std::string_view> AddCandidate(const NodeInfo& node, const MigGpuModel* model,
                                               const MigNodeOffer& current) {
    int64_t gpus = PhysicalGpus(node, *model, current, layouts_);
    std::optional<std::string> base;
    if (SingleStrategy(node)) base = std::string(BaseProduct(node.gpu.product));
    auto same = [&](const NodeClass& c) {
      return c.model == model && c.gpus == gpus && c.single_base == base &&
             c.current_layout == node.gpu.mig_config && c.current == current;
    };
    auto it = std::find_if(classes_.begin(), classes_.end(), same);
    if (it == classes_.end()) {
      if (classes_.size() == kMaxMigAdviceClasses) return kTooManyKinds;
      NodeClass c{model, gpus, base, node.gpu.mig_config, current, {}, {}};
      for (const auto& [name, offer] : OffersFor(model, gpus)) {
        if (name == node.gpu.mig_config) continue;
        if (!base) {
          c.offers.emplace_back(name, offer);
        } else if (auto single = SingleStrategyOffer(offer, *base)) {
          c.offers.emplace_back(name, *std::move(single));
        }
      }
      if (c.offers.empty()) return kNoLayout;
      classes_.push_back(std::move(c));
      it = classes_.end() - 1;
    }
    it->nodes.push_back(node.name);
    return std::nullopt;
  }

  // What each layout makes of a model and GPU count, computed once for all nodes alike.
  const LayoutOffers& OffersFor(const MigGpuModel* model, int64_t gpus) {
    auto [it, inserted] = offers_.try_emplace({model, gpus});
    if (inserted) {
      for (const auto& [name, layout] : layouts_.layouts) {
        if (auto offer = OfferOf(layout, *model, gpus)) it->second.emplace_back(name, *offer);
      }
    }
    return it->second;
  }

  // Every change that serves more waiting slices, best first.
  std::vector<Option> Options() const {
    std::vector<Option> options;
    for (size_t c = 0; c < classes_.size(); ++c) {
      if (classes_[c].nodes.empty()) continue;
      for (size_t o = 0; o < classes_[c].offers.size(); ++o) {
        const MigNodeOffer& offer = classes_[c].offers[o].second;
        int64_t gain = 0;
        for (const auto& [p, d] : Deltas(classes_[c], offer, demand_.slices, free_)) gain += d;
        if (gain <= 0) continue;
        int64_t headroom = 0;
        for (const auto& [p, n] : offer.slices) headroom += demand_.slices.count(p) ? n : 0;
        options.push_back({c, o, gain, headroom, ObservedMatch(offer, shares_), offer.whole_gpus});
      }
    }
    auto key = [&](const Option& o) {
      return std::make_tuple(-o.gain, -o.observed, -o.headroom, -o.whole,
                             classes_[o.cls].nodes.front(), classes_[o.cls].offers[o.offer].first);
    };
    std::sort(options.begin(), options.end(),
              [&](const Option& a, const Option& b) { return key(a) < key(b); });
    return options;
  }

  MigNodeAdvice Apply(const Option& o) {
    NodeClass& cls = classes_[o.cls];
    const auto& [layout, offer] = cls.offers[o.offer];
    MigNodeAdvice a{cls.nodes.front(),
                    std::string(cls.model->name),
                    cls.gpus,
                    cls.current_layout,
                    layout,
                    cls.current,
                    offer,
                    {},
                    cls.single_base.has_value()};
    for (const auto& [p, d] : Deltas(cls, offer, demand_.slices, free_)) {
      if (d > 0) a.serves[p] = d;
    }
    for (const auto& [p, n] : cls.current.slices) free_[p] -= n;
    for (const auto& [p, n] : offer.slices) free_[p] += n;
    cls.nodes.pop_front();
    return a;
  }

  const MigLayouts& layouts_;
  const MigDemand& demand_;
  const GpuResourceNames& gpu_names_;
  const std::map<std::string, double> shares_;
  std::vector<int64_t> whole_pods_;        // largest first
  std::map<int64_t, int64_t> whole_free_;  // free whole GPUs -> schedulable nodes
  int64_t baseline_ = 0;                   // whole-GPU pods that fit before any change
  std::map<std::string, int64_t> free_;    // free slices per profile
  std::vector<NodeClass> classes_;
  std::map<std::pair<const MigGpuModel*, int64_t>, LayoutOffers> offers_;
};

}  // namespace

MigDemand PendingMigDemand(std::span<const PodInfo> pods) {
  MigDemand demand;
  size_t counted = 0;
  for (const PodInfo& pod : pods) {
    if (!pod.node_name.empty() || pod.terminal()) continue;
    if (++counted > kMaxAdvicePods) break;
    for (const auto& r : pod.requests) {
      int64_t units = std::clamp<int64_t>(r.milli / 1000, 0, kMaxGpusPerNode);
      if (units == 0) continue;
      if (r.name == kGpuResource) {
        std::string product = SingleMigProductOf(pod);
        if (product.empty()) {
          demand.whole_gpu_pods.push_back(units);
        } else {
          demand.slices[product] += units;
          ++demand.pods[product];
        }
      } else if (IsMigSliceResource(r.name)) {
        std::string profile(MigProfileOf(r.name));
        demand.slices[profile] += units;
        ++demand.pods[profile];
      }
    }
  }
  return demand;
}

MigDemand PendingMigDemand(const Policy& policy, const ClusterSnapshot& snapshot) {
  std::span<const PodInfo> pending = snapshot.gpu_pods().pending;
  MigDemand demand = PendingMigDemand(pending);
  std::vector<const NodeState*> mig_nodes;
  std::vector<uint32_t> classes;
  for (size_t i = 0; i < snapshot.size(); ++i) {
    const NodeState& node = *snapshot.nodes()[i];
    // Only the whole GPUs of these can an advised change take.
    if (node.info.gpu.mig_capable.value_or(false) &&
        !Unchangeable(node, CurrentOffer(node.info), policy.gpu_names())) {
      mig_nodes.push_back(&node);
      classes.push_back(snapshot.classes()[i]);
    }
  }
  demand.whole_gpu_pods.clear();
  size_t counted = 0;
  for (const PodInfo& pod : pending) {
    if (!pod.node_name.empty() || pod.terminal()) continue;
    if (++counted > kMaxAdvicePods) break;
    int64_t units =
        std::clamp<int64_t>(pod.requests.milli(kGpuResource) / 1000, 0, kMaxGpusPerNode);
    if (units == 0 || !SingleMigProductOf(pod).empty()) continue;
    const Policy::Judgement judged = policy.Judge(pod, snapshot);
    std::vector<Verdict> verdicts = judged.engine().Filter(
        *judged.cycle, Candidates{mig_nodes, classes, snapshot.class_count(), {}, {}});
    for (size_t i = 0; i < mig_nodes.size(); ++i) {
      bool pinned_away = pod.pins.has_required_pins() &&
                         !MeetsRequiredPins(pod.pins, mig_nodes[i]->info.pin_labels);
      if (!pinned_away && verdicts[i].code != VerdictCode::kUnresolvable) {
        demand.whole_gpu_pods.push_back(units);
        break;
      }
    }
  }
  return demand;
}

KubectlLine MigNodeAdvice::Command() const {
  return LabelNodeCommand(node, "nvidia.com/mig.config", layout);
}

MigAdvice AdviseMigLayouts(const ClusterSnapshot& snapshot, const MigLayouts& layouts,
                           const MigDemand& demand, const GpuResourceNames& gpu_names) {
  MigAdvice out;
  out.layouts_source = layouts.source;
  out.demand = demand;
  MigPlanner planner(layouts, demand, gpu_names, ObservedMigShares(snapshot));
  planner.ReadNodes(snapshot, out);
  while (out.advice.size() < std::min(out.candidates, kMaxMigAdvisedNodes)) {
    std::optional<MigNodeAdvice> change = planner.NextChange();
    if (!change) break;
    out.advice.push_back(*std::move(change));
  }
  for (const auto& [p, n] : demand.slices) {
    int64_t served = std::min(n, Get(planner.free(), p));
    out.served[p] = served;
    if (n > served) out.still_waiting[p] = n - served;
  }
  return out;
}

}  // namespace gpusched
