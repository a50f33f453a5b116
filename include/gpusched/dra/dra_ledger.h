// DraLedger: the writer's side of the cluster's DRA state (resource.k8s.io/v1): the ResourceSlices
// drivers publish, the ResourceClaims that ask for and hold devices, and the DeviceClasses.
//
// What it gives the snapshot:
// - per node, its GPUs published as DRA devices by NVIDIA's driver (gpu.nvidia.com), in the terms
//   every plugin and report already counts: nvidia.com/gpu for full GPUs, nvidia.com/mig-<profile>
//   for MIG devices, the product from productName (spaces as dashes, as GFD writes the label), the
//   memory from capacity; and what allocated claims use of them (DraNodeView);
// - a catalog (DraCatalog) that placement reads to turn a pod's claims into GPU requests.
//
// Rules, as for Nodes and Pods: a pool counts only when every slice of its newest generation has
// arrived (resourceSliceCount); a device is in use when an allocated claim's results name it (a
// claim shared by several pods uses it once; adminAccess uses nothing). A partitionable GPU (a
// full GPU and MIG devices consuming one counter set) counts as one GPU, taken whole when any of
// its devices is allocated. Slices of other drivers, and slices not bound to one node (allNodes,
// nodeSelector), are kept but add no GPU to any node.
//
// Each kind is kept in a DraStore (dra/dra_store.h), which holds the rule of keeping, replacing
// and refusing that every kind follows.
//
// Bounds: at most DraSliceKind::kMax slices, DraClaimKind::kMax claims and DraClassKind::kMax
// classes are kept (past them a new object is refused and counted in refused(), which the live
// inventory reports as gpusched_inventory_objects_skipped_total{reason="dra_slice_cap"} and the
// like); each object is bounded by its decoder (dra/dra.h), a claim by bytes too
// (dra/dra_entries.h: kept without its requests past them, reason dra_claim_bytes); at most
// kMaxDeviceKinds kinds of devices are told apart (past them every claim is unmodelled, reason
// dra_kind_cap). A device is identified as Kubernetes identifies it, by driver, pool and name:
// listed by two slices of its pool, or twice in allocation results, it counts once.
//
// Memory: a slice is kept as DraStoredSlice (dra/dra_stored_slice.h; with the index of
// devices by (driver, pool, name), about 250 bytes a device), a claim as an immutable entry that
// every catalog shares (dra/dra_claim_table.h).
// Not thread-safe: one writer thread owns it; what it builds is immutable.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <set>
#include <span>
#include <string>
#include <string_view>
#include <tuple>
#include <unordered_map>
#include <vector>

#include "gpusched/dra/dra.h"
#include "gpusched/dra/dra_claim_table.h"
#include "gpusched/dra/dra_entries.h"
#include "gpusched/dra/dra_store.h"
#include "gpusched/dra/dra_stored_slice.h"
#include "gpusched/model/resource_list.h"

namespace gpusched {

// What DRA devices add to one node.
struct DraNodeView {
  ResourceList allocatable;  // nvidia.com/gpu and nvidia.com/mig-<profile>, in milli-units
  ResourceList used;         // of those, what allocated claims hold
  std::string product;       // GFD style, from productName of its first full GPU
  int64_t memory_mib = 0;    // of its first full GPU; 0 when not published
  bool operator==(const DraNodeView&) const = default;
};

// One device of each kind the nodes offer (driver, type, product, MIG profile, memory, driver
// version, compute capability and architecture alike), with what it counts as.
struct DraDeviceKind {
  std::string driver;
  std::shared_ptr<const DraDevice> sample;  // the device of its kind (DraKindInterner)
  std::string resource;                     // nvidia.com/gpu or nvidia.com/mig-<profile>
  std::string product;                      // GFD style
};

// Kinds of devices told apart; a cluster has a few dozen (products, MIG profiles, drivers).
inline constexpr size_t kMaxDeviceKinds = 512;

// What turning a pod's claims into GPU requests reads (dra/dra_claims.h).
class DraLookup {
 public:
  virtual ~DraLookup() = default;
  virtual const DraClaimEntry* FindClaim(std::string_view namespace_name,
                                         std::string_view name) const = 0;
  virtual const DraClassEntry* FindClass(std::string_view name) const = 0;
  virtual std::span<const DraDeviceKind> kinds() const = 0;
  // The nodes offer more than kMaxDeviceKinds kinds: kinds() holds the first of them only.
  virtual bool kinds_cut() const = 0;
};

// What placement reads of the DRA state, as of one snapshot: the claims, the classes and the kinds
// of devices the nodes offer. Immutable once built.
struct DraCatalog final : DraLookup {
  DraClaimTable claims;         // shared with the ledger and other catalogs
  DraClassKind::Table classes;  // a copy of the ledger's: pointers, not the classes
  std::vector<DraDeviceKind> device_kinds;
  bool device_kinds_cut = false;
  size_t claim_bytes = 0;   // DraLedger::claim_bytes, for the gauges
  size_t device_count = 0;  // DraLedger::device_count, for the gauges

  const DraClaimEntry* FindClaim(std::string_view namespace_name,
                                 std::string_view name) const override;
  const DraClassEntry* FindClass(std::string_view name) const override;
  std::span<const DraDeviceKind> kinds() const override { return device_kinds; }
  bool kinds_cut() const override { return device_kinds_cut; }
};

// The GFD-style product of a DRA productName: "NVIDIA A100-SXM4-80GB" -> "NVIDIA-A100-SXM4-80GB".
std::string DraProductLabel(std::string_view product_name);

class DraLedger final : public DraLookup {
 public:
  // Objects refused for the stores' bounds (dra/dra_store.h) and for kMaxDeviceKinds since the
  // ledger was made, a list's as a watch's.
  struct Refusals {
    uint64_t slices = 0;
    uint64_t claims = 0;
    uint64_t classes = 0;
    uint64_t claim_bytes = 0;  // claims kept without their requests (dra/dra_entries.h)
    uint64_t kinds = 0;        // kinds past kMaxDeviceKinds, at each count of the devices
  };

  DraLedger();

  // What a slice is kept as, its kinds interned where the ledger's are: for a list decoded on
  // another thread than the ledger's writer (the interner is thread-safe).
  const std::shared_ptr<DraKindInterner>& kind_interner() const { return kinds_interner_; }

  // An object kept, replacing the one under its key; false when refused for the ledger's
  // bounds. A claim takes what is left of the claims' byte budget (dra/dra_entries.h).
  bool Upsert(DraSlice slice);
  bool Upsert(DraStoredSlice slice);
  bool Upsert(DraClaim claim);
  bool Upsert(DraDeviceClass device_class);
  // The object of kind `Kind` (DraSliceKind, DraClaimKind, DraClassKind) under `key`
  // (Kind::Key(namespace, name)) deleted.
  template <class Kind>
  void Delete(std::string_view key) {
    if (Store<Kind>().Erase(key)) Changed(Kind::kDevices);
  }
  // Every object of kind `Kind` replaced by `entries` (a list, made entries as it was decoded: a
  // claim bounded by the bytes the list's claims before it hold), each kept as Upsert keeps it.
  template <class Kind>
  void Replace(std::vector<typename DraStore<Kind>::Entry> entries) {
    Store<Kind>().Replace(std::move(entries));
    Changed(Kind::kDevices);
  }

  // Nodes whose view may have changed since the last call (and clears the set).
  std::set<std::string, std::less<>> TakeDirtyNodes();
  // The view of every node with DRA GPUs; computed again only after a change.
  const std::map<std::string, DraNodeView, std::less<>>& NodeViews();
  // The catalog as of now; shared until the next change.
  std::shared_ptr<const DraCatalog> Catalog();

  // DraLookup, on the ledger's current objects (the writer's thread only): how the ledger reads
  // what a pod's claims ask for as it sees the pod. Kinds are computed again only after a slice
  // changed, so pods and claims arriving together cost a lookup each, not a rebuild.
  const DraClaimEntry* FindClaim(std::string_view namespace_name,
                                 std::string_view name) const override;
  const DraClassEntry* FindClass(std::string_view name) const override;
  std::span<const DraDeviceKind> kinds() const override;
  bool kinds_cut() const override;

  size_t slice_count() const { return Store<DraSliceKind>().size(); }
  size_t claim_count() const { return Store<DraClaimKind>().size(); }
  size_t class_count() const { return Store<DraClassKind>().size(); }
  size_t claim_bytes() const { return Store<DraClaimKind>().bytes(); }  // what claims hold, about
  // Moves with every change of a slice, claim or class.
  uint64_t version() const { return version_; }
  size_t device_count() const;  // devices of counted pools, each once
  Refusals refused() const;

 private:
  template <class Kind>
  DraStore<Kind>& Store() {
    return std::get<DraStore<Kind>>(stores_);
  }
  template <class Kind>
  const DraStore<Kind>& Store() const {
    return std::get<DraStore<Kind>>(stores_);
  }
  // Keeps `entry` in its kind's store (DraStore::Put), marking what changed when it is kept.
  template <class Kind>
  bool Keep(typename DraStore<Kind>::Entry entry);
  // Marks the views and catalog stale; `devices` when a slice changed.
  void Changed(bool devices);
  // Computes what the slices offer: per node its GPUs, per device where it counts, the kinds.
  void RebuildDevices() const;
  // Computes the views (devices plus what allocated claims use) and the catalog; nodes whose view
  // changed become dirty.
  void Rebuild();

  std::shared_ptr<DraKindInterner> kinds_interner_;
  std::tuple<DraStore<DraSliceKind>, DraStore<DraClaimKind>, DraStore<DraClassKind>> stores_;
  uint64_t version_ = 0;
  std::set<std::string, std::less<>> dirty_nodes_;
  mutable uint64_t kinds_refused_ = 0;  // Refusals::kinds: counted when the devices are
  bool stale_ = true;
  // What the slices offer, kept until a slice changes (RebuildDevices). Slots point into the
  // slices of the slices' store, so a change of the slices drops them at once.
  struct DeviceId {
    std::string_view driver, pool, device;
    bool operator==(const DeviceId&) const = default;
  };
  struct DeviceIdHash {
    size_t operator()(const DeviceId& id) const;
  };
  struct Slot {
    const DraStoredSlice* slice;    // its node and counter sets
    const DraStoredDevice* device;  // its counter sets
    uint32_t resource;              // what it counts as there: an index into resources_
  };
  mutable bool devices_stale_ = true;
  mutable std::map<std::string, DraNodeView, std::less<>> offered_;  // allocatable per node
  mutable std::unordered_map<DeviceId, Slot, DeviceIdHash> slots_;
  mutable std::vector<std::string> resources_;
  mutable std::vector<DraDeviceKind> kinds_;
  mutable bool kinds_cut_ = false;
  std::map<std::string, DraNodeView, std::less<>> views_;
  std::shared_ptr<const DraCatalog> catalog_;
};

}  // namespace gpusched
