// The fuzz checks: one function per parser, called with arbitrary bytes by its libFuzzer target
// (tests/fuzz/<name>_fuzz.cc) and by fuzz_replay_test for the committed seeds and regressions.
//
// Each check feeds the input to one reading API and catches only the errors that API documents
// (DecodeError, YamlError, TraceError, KubeConfigError, ...); anything else escapes and crashes
// the fuzzer. Where an API states a property of its output, the check tests it and, when it does
// not hold, prints what failed and traps. Not thread-safe (the extender check shares one
// service stack).
#pragma once

#include <span>
#include <string_view>

namespace gpusched::fuzz {

// DecodeExtenderArgs; what decodes is filtered and prioritized over the sample cluster with the
// default policy, and both answers must account for every node and encode as JSON.
void CheckExtenderRequest(std::string_view input);
// DecodePod / DecodeNode on one JSON object, as the decoders' own callers run them: a pod's claims
// within kMaxPodClaims, those past it counted. Any decoder's refusal that names a bound names it
// as a metric label value.
void CheckPodDecoder(std::string_view input);
void CheckNodeDecoder(std::string_view input);
// DecodeDisruptionBudget on one JSON object: the selector within its budget, an unreadable one
// selecting every pod of the namespace, no disruption allowed without status.
void CheckPdbDecoder(std::string_view input);
// The group-size decoder (codec/k8s_group_decode.h): the first byte picks the kind.
void CheckGroupSizeDecoder(std::string_view input);
// PodMutator::Review (the admission webhook) on the input as a request body: a one-line JSON
// answer, 200 (or 400 when no request uid can be read), a patch only when patched, JSON and within
// the term bound.
void CheckAdmissionReview(std::string_view input);
// DecodeDraSlice, DecodeDraClaim and DecodeDraDeviceClass on one JSON object, each within the
// bounds of dra/dra.h (slice names qualified); the input itself and every selector decoded
// compiled as a DraSelector and matched against sample NVIDIA devices: a reason exactly when
// unsupported, no answer when unsupported, the same answer twice.
void CheckDraDecoder(std::string_view input);
// A reflector's input: the bytes as one LIST page (ApplyListPage), then each line as a WATCH
// event (ApplyWatchLine), into a sink that decodes pods; only the page's envelope may fail.
void CheckWatchStream(std::string_view input);
// YamlDocumentsToJson; every document must come out as JSON.
void CheckYamlToJson(std::string_view input);
// ParsePolicy: every error one line naming the file; FormatPolicy's text of an accepted policy must
// parse back to the same policy, which must compile or be rejected with InputError.
void CheckPolicyReader(std::string_view input);
// ParseScenario: at least one node; a cluster with a GPU and a small enough workload (as the
// simulate command bounds a run) simulated with the gpusched policy alone and as the README
// registers it beside kube-scheduler's LeastAllocated and MostAllocated: every pod placed or
// failed, the allocated share a share.
void CheckScenarioReader(std::string_view input);
// ParseOpenbNodes on the input up to a line "--" and ParseOpenbPods on the rest (each on the whole
// input when there is none): every error one printable line naming the file; node names present
// and unique, a model for every node with GPUs; a share only of one GPU. Both lists read, they
// are simulated as CheckScenarioReader simulates a scenario.
void CheckOpenbTrace(std::string_view input);
// ParseMigLayouts: every error one line naming the file, every layout name a label value, and each
// layout's offer on every known GPU model within what its GPUs hold.
void CheckMigLayoutsReader(std::string_view input);
// ParseQuantityMilli against ReferenceQuantityMilli (quantity_oracle.h).
void CheckQuantity(std::string_view input);
// LoadKubeconfig on the input written to a file in a private, otherwise empty directory.
void CheckKubeconfigReader(std::string_view input);
// HttpRequestParser with small limits (kFuzzHttpLimits in fuzz_checks.cc), fed the input byte by
// byte, in a few fixed chunk sizes and whole, pipelined requests read on with DropBody and Reset as
// the transport does: every feeding gives the same requests and the same error, each reported as
// soon as the chunk holding its last byte arrives; every request keeps within the limits; the
// parser's budget holding matches held() throughout and returns to zero.
void CheckHttpRequestParser(std::string_view input);

// The fuzz targets call this first: the checks then step over the bugs reported but not fixed yet
// (each a TODO in fuzz_checks.cc, its reproducer in regressions/<target>/DISABLED_*), so that a
// bounded run looks for new ones. The replay test leaves it off.
void StepOverKnownBugs();

struct FuzzCheck {
  std::string_view name;  // the fuzz target and its seeds/ and regressions/ directories
  void (*check)(std::string_view input);
};
// Every check above, by name.
std::span<const FuzzCheck> AllFuzzChecks();

}  // namespace gpusched::fuzz
