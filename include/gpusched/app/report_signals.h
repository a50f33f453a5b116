// ReportSignals: SIGINT and SIGTERM of a one-shot report command (capacity, why-pending). Until
// Computing(), a signal ends the process at once, as for any command: nothing needs undoing while
// the inventory loads. From Computing() on, a signal raises the Cancellation it returns, which the
// report checks between nodes and between pods, so the command stops within one judgement and
// says so (kCancelledExit) instead of printing a partial report.
//
// Construct it first in the command, before any other thread starts (the API client's do): it
// blocks the signals in the calling thread so they reach its own (gpusched/cli/signal_shutdown.h).
//
// RunReportCommand is the whole front door of such a command, so each says only what it computes
// and how it prints.
#pragma once

#include <chrono>
#include <string>
#include <string_view>
#include <vector>

#include "gpusched/app/cluster_view.h"
#include "gpusched/app/command_line.h"
#include "gpusched/cli/signal_shutdown.h"
#include "gpusched/util/cancellation.h"

namespace gpusched {

// The exit code of a report a signal cancelled: 128 + SIGTERM, as if the signal had ended it.
inline constexpr int kCancelledExit = 143;

class ReportSignals {
 public:
  // The grace is a safeguard only: a cancelled report returns within one judgement.
  ReportSignals() : shutdown_(std::chrono::seconds(5)) {}

  // From now on a signal cancels instead of ending the process.
  const Cancellation* Computing() {
    shutdown_.Serving([this] { cancellation_.Cancel(); });
    return &cancellation_;
  }

 private:
  Cancellation cancellation_;  // declared first: outlives the signal thread
  SignalShutdown shutdown_;
};

// A one-shot report command from its arguments to its exit code: reads its Options (with a
// `report` of ReportOptions; ReadCommandOptions), loads the cluster view, computes the report,
// `compute(policy, snapshot, settings(options))` with the signals' cancellation set in what
// `settings` makes, and unless a signal cancelled it (the report's `cancelled`; then
// kCancelledExit, said as "<command>: cancelled by a signal"), names the inventory in it
// (`inventory`) and prints it with `print(options, view, report)`, which returns the exit code.
template <class Options, class Compute, class Settings, class Print>
int RunReportCommand(const std::vector<std::string>& args, std::string_view command,
                     Compute&& compute, Settings&& settings, Print&& print) {
  ReportSignals signals;
  Options options;
  if (auto done = ReadCommandOptions(args, options)) return *done;
  return RunCatchingInputErrors([&] {
    ClusterView view = LoadClusterView(options.report.view);
    auto compute_options = settings(options);
    compute_options.cancellation = signals.Computing();
    auto report = compute(*view.policy, *view.snapshot, compute_options);
    if (report.cancelled) {
      PrintError(std::string(command) + ": cancelled by a signal");
      return kCancelledExit;
    }
    report.inventory = view.description;
    return print(options, view, report);
  });
}

}  // namespace gpusched
