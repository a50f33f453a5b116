#include "gpusched/planning/mig_advice_format.h"

#include <algorithm>

#include "gpusched/codec/json_writer.h"
#include "gpusched/util/quote.h"

namespace gpusched {
namespace {

std::string Counts(const std::map<std::string, int64_t>& counts) {
  std::string out;
  for (const auto& [p, n] : counts) {
    if (n <= 0) continue;
    out += (out.empty() ? "" : ", ") + std::to_string(n) + "x " + QuoteForMessage(p, 128);
  }
  return out.empty() ? "none" : out;
}

// Whether a slice name is a MIG product (the single strategy's slices, nvidia.com/gpu units).
bool IsProductKey(std::string_view key) { return key.find("-MIG-") != std::string_view::npos; }

std::string OfferText(const MigNodeOffer& offer) {
  std::string out;
  if (offer.whole_gpus > 0) out = std::to_string(offer.whole_gpus) + " whole GPUs";
  for (const auto& [p, n] : offer.slices) {
    if (n <= 0) continue;
    out += (out.empty() ? "" : ", ") + std::to_string(n) + "x " + QuoteForMessage(p, 128);
    if (IsProductKey(p)) out += " (as nvidia.com/gpu)";
  }
  return out.empty() ? "nothing" : out;
}

void CountsJson(JsonWriter& w, const std::map<std::string, int64_t>& counts) {
  w.BeginObject();
  for (const auto& [p, n] : counts) w.Key(p).Int(n);
  w.EndObject();
}

void OfferJson(JsonWriter& w, const MigNodeOffer& offer) {
  w.BeginObject();
  if (offer.whole_gpus > 0) w.Key("gpu").Int(offer.whole_gpus);
  // Under the single strategy the slices are the node's nvidia.com/gpu.
  for (const auto& [p, n] : offer.slices) w.Key(IsProductKey(p) ? "gpu" : "mig-" + p).Int(n);
  w.EndObject();
}

}  // namespace

std::string FormatMigAdviceText(const MigAdvice& a) {
  std::string out = "MIG layout advice";
  if (!a.inventory.empty()) out += " for " + QuoteForMessage(a.inventory, 512);
  out += "; layouts: " + QuoteForMessage(a.layouts_source, 512) + "\n";
  int64_t mig_pods = 0;
  for (const auto& [p, n] : a.demand.pods) mig_pods += n;
  out += "waiting MIG slices: " + Counts(a.demand.slices) + " (" + std::to_string(mig_pods) +
         " pods); free slices on schedulable nodes: " + Counts(a.free_slices) + "\n";
  out += "waiting whole-GPU pods: ";
  out += a.demand.whole_gpu_pods.empty()
             ? "none\n"
             : std::to_string(a.demand.whole_gpu_pods.size()) + " (" +
                   std::to_string(a.whole_gpu_pods_fit) +
                   " fit on free whole GPUs now, and still after this advice)\n";
  out += "candidates: " + std::to_string(a.candidates) + " idle MIG-capable nodes";
  if (a.single_candidates > 0) {
    out += " (" + std::to_string(a.single_candidates) + " under the MIG single strategy)";
  }
  if (!a.skipped.empty()) {
    out += "; not advised:";
    bool first = true;
    for (const auto& [reason, n] : a.skipped) {
      out += (first ? " " : ", ") + std::to_string(n) + " " + reason;
      first = false;
    }
  }
  out += "\n\n";
  if (a.advice.empty()) out += "# no change serves a waiting MIG pod\n";
  for (const auto& n : a.advice) {
    // Every value here comes from the cluster or a file: quoted, so none starts a line of its own.
    out += "# " + QuoteForMessage(n.node) + " (" + n.model + ", " + std::to_string(n.gpus) +
           " GPUs, MIG " + (n.single_strategy ? "single" : "mixed") + ", now " +
           (n.current_layout.empty() ? "unlabelled" : QuoteForMessage(n.current_layout, 96)) +
           ": " + OfferText(n.current) + "): serves " + Counts(n.serves) + "; offers " +
           OfferText(n.offer) + "\n";
    KubectlLine line = n.Command();
    out += (line.refused.empty() ? line.command : "# no command: " + line.refused) + "\n";
  }
  out += "\nstill waiting after this advice: " + Counts(a.still_waiting) + "\n";
  bool mixed_waiting = std::any_of(a.still_waiting.begin(), a.still_waiting.end(),
                                   [](const auto& w) { return !IsProductKey(w.first); });
  if (mixed_waiting && a.single_candidates > 0) {
    out +=
        "note: under the MIG single strategy (the GPU Operator's default) a node offers its "
        "slices as nvidia.com/gpu of product <model>-MIG-<profile>, never as "
        "nvidia.com/mig-<profile>; pods asking for nvidia.com/mig-<profile> need nodes under "
        "the mixed strategy (the GPU Operator's Helm value mig.strategy=mixed), or can ask for "
        "nvidia.com/gpu with a nodeSelector nvidia.com/gpu.product: <model>-MIG-<profile>\n";
  }
  return out;
}

std::string FormatMigAdviceJson(const MigAdvice& a) {
  std::string out;
  JsonWriter w(out);
  w.BeginObject().Key("inventory").String(a.inventory).Key("layouts").String(a.layouts_source);
  w.Key("demand").BeginObject().Key("slices");
  CountsJson(w, a.demand.slices);
  w.Key("pods");
  CountsJson(w, a.demand.pods);
  w.Key("wholeGpuPods").Int(static_cast<int64_t>(a.demand.whole_gpu_pods.size()));
  w.Key("wholeGpuPodsFit").Int(a.whole_gpu_pods_fit).EndObject();
  w.Key("freeSlices");
  CountsJson(w, a.free_slices);
  w.Key("candidates").Int(static_cast<int64_t>(a.candidates));
  w.Key("singleStrategyCandidates").Int(static_cast<int64_t>(a.single_candidates));
  w.Key("advice").BeginArray();
  for (const auto& n : a.advice) {
    w.BeginObject().Key("node").String(n.node).Key("model").String(n.model);
    w.Key("gpus").Int(n.gpus).Key("strategy").String(n.single_strategy ? "single" : "mixed");
    w.Key("currentLayout").String(n.current_layout);
    w.Key("layout").String(n.layout).Key("serves");
    CountsJson(w, n.serves);
    w.Key("offers");
    OfferJson(w, n.offer);
    KubectlLine line = n.Command();
    w.Key("command");
    if (line.refused.empty()) {
      w.String(line.command);
    } else {
      w.Null().Key("commandRefused").String(line.refused);
    }
    w.EndObject();
  }
  w.EndArray().Key("served");
  CountsJson(w, a.served);
  w.Key("stillWaiting");
  CountsJson(w, a.still_waiting);
  w.Key("skipped").BeginObject();
  for (const auto& [reason, n] : a.skipped) w.Key(reason).Int(static_cast<int64_t>(n));
  w.EndObject().EndObject();
  out += "\n";
  return out;
}

}  // namespace gpusched
