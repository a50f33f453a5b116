#include "gpusched/dra/dra_entries.h"

#include <utility>

namespace gpusched {
namespace {

// A string's bytes beyond the object itself (short strings live inside it).
size_t Heap(const std::string& s) { return s.size() < sizeof(std::string) ? 0 : s.capacity() + 1; }

size_t RequestBytes(const DraDeviceRequest& r) {
  size_t bytes = sizeof(r) + Heap(r.name) + Heap(r.device_class);
  for (const auto& s : r.selectors) bytes += sizeof(s) + 3 * s.size();
  for (const auto& alternative : r.first_available) bytes += RequestBytes(alternative);
  return bytes;
}

const DraDeviceRequest& ModelledAlternative(const DraDeviceRequest& r) {
  return r.first_available.empty() ? r : r.first_available.front();
}

}  // namespace

DraCompiledSelectors DraCompiledSelectors::Compile(const std::vector<std::string>& expressions) {
  DraCompiledSelectors out;
  for (const auto& text : expressions) {
    DraSelector s = DraSelector::Compile(text);
    if (!s.supported()) {
      out.unsupported = s.unsupported_reason();
      out.selectors.clear();
      out.cost = 0;
      return out;
    }
    out.cost += s.cost();
    out.selectors.push_back(std::move(s));
  }
  return out;
}

size_t DraClaimBytes(const DraClaim& claim) {
  size_t bytes =
      sizeof(DraClaimEntry) + Heap(claim.namespace_name) + Heap(claim.name) + Heap(claim.uid);
  for (const auto& r : claim.requests) bytes += RequestBytes(r);
  for (const auto& c : claim.constraints) {
    bytes += sizeof(c) + Heap(c.match_attribute);
    for (const auto& r : c.requests) bytes += sizeof(r) + Heap(r);
  }
  for (const auto& r : claim.results) {
    bytes += sizeof(r) + Heap(r.request) + Heap(r.driver) + Heap(r.pool) + Heap(r.device);
  }
  for (const auto& uid : claim.reserved_for) bytes += sizeof(uid) + Heap(uid);
  return bytes;
}

std::shared_ptr<const DraClaimEntry> DraClaimEntry::Make(DraClaim claim, size_t bytes_left) {
  auto entry = std::make_shared<DraClaimEntry>();
  size_t bytes = DraClaimBytes(claim);
  if (bytes > kMaxDraClaimBytes || bytes > bytes_left) {
    entry->requests_dropped =
        bytes > kMaxDraClaimBytes
            ? "the claim takes " + std::to_string(bytes) + " bytes, more than the " +
                  std::to_string(kMaxDraClaimBytes) + " gpusched keeps of one"
            : "the claims held take the byte budget gpusched keeps for all (" +
                  std::to_string(kMaxDraClaimBytesTotal) + " bytes)";
    claim.requests = {};
    claim.requests.shrink_to_fit();
    claim.constraints = {};
    bytes = DraClaimBytes(claim);
  }
  for (const auto& r : claim.requests) {
    entry->requests.push_back(DraCompiledSelectors::Compile(ModelledAlternative(r).selectors));
  }
  entry->claim = std::move(claim);
  entry->bytes = bytes;
  return entry;
}

std::shared_ptr<const DraClassEntry> DraClassEntry::Make(DraDeviceClass device_class) {
  auto entry = std::make_shared<DraClassEntry>();
  entry->selectors = DraCompiledSelectors::Compile(device_class.selectors);
  entry->device_class = std::move(device_class);
  return entry;
}

}  // namespace gpusched
