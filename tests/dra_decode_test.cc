#include "gpusched/codec/k8s_dra_decode.h"

#include <gtest/gtest.h>

#include <optional>
#include <string>

#include "testing/test_support.h"

namespace gpusched::dra_decode_test {
namespace {

// Decodes one JSON object with `decode`, as the decoders' callers do: simdjson's errors become
// DecodeError, trailing data is refused.
template <class Decode>
auto DecodeText(const std::string& json, Decode decode) {
  simdjson::ondemand::parser parser;
  simdjson::padded_string padded(json);
  return WithContext("object", [&] {
    simdjson::ondemand::document doc = parser.iterate(padded);
    auto out = decode(doc.get_object().value());
    ExpectEnd(doc);
    return out;
  });
}

DraSlice Slice(const std::string& json) { return DecodeText(json, DecodeDraSlice); }
DraClaim Claim(const std::string& json) { return DecodeText(json, DecodeDraClaim); }
DraDeviceClass Class(const std::string& json) { return DecodeText(json, DecodeDraDeviceClass); }
std::string DraFixture(const std::string& file) { return testing::Fixture("dra/" + file); }

// The DecodeError `decode` throws on `json`, if any.
template <class Decode>
std::optional<DecodeError> Refusal(const std::string& json, Decode decode) {
  try {
    DecodeText(json, decode);
  } catch (const DecodeError& e) {
    return e;
  }
  return std::nullopt;
}
template <class Decode>
std::string ErrorOf(const std::string& json, Decode decode) {
  std::optional<DecodeError> e = Refusal(json, decode);
  return e ? e->what() : "";
}
// The bound the refusal names: "invalid" when it names none, "" when `decode` throws nothing.
template <class Decode>
std::string BoundOf(const std::string& json, Decode decode) {
  std::optional<DecodeError> e = Refusal(json, decode);
  return !e ? "" : e->bound() != nullptr ? e->bound() : "invalid";
}

bool Has(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

// A slice whose spec is `spec` (JSON text without braces), for the refusals.
std::string SliceWith(const std::string& spec) {
  return R"({"metadata":{"name":"s"},"spec":{"driver":"gpu.nvidia.com",)" + spec + "}}";
}
std::string DeviceWith(const std::string& fields) {
  return SliceWith(R"("devices":[{"name":"gpu-0",)" + fields + "}]");
}
std::string RequestWith(const std::string& exactly) {
  return R"({"spec":{"devices":{"requests":[{"name":"r","exactly":{)" + exactly + "}}]}}}";
}

TEST(DraDecodeSlice, reads_eight_a100s_and_qualifies_their_names_after_the_driver) {
  // The fixture's keys are sorted: spec.devices comes before spec.driver.
  DraSlice s = Slice(DraFixture("slice-a100x8.json"));
  EXPECT_EQ(s.name, "dgx-a100-01-gpu.nvidia.com-7xk2p");
  EXPECT_EQ(s.driver, "gpu.nvidia.com");
  EXPECT_EQ(s.pool, "dgx-a100-01");
  EXPECT_EQ(s.pool_generation, 1);
  EXPECT_EQ(s.pool_slice_count, 1);
  EXPECT_EQ(s.node_name, "dgx-a100-01");
  EXPECT_TRUE(s.shared_counters.empty());
  ASSERT_EQ(s.devices.size(), 8u);
  for (size_t i = 0; i < s.devices.size(); ++i) {
    const DraDevice& d = s.devices[i];
    EXPECT_EQ(d.name, "gpu-" + std::to_string(i));
    EXPECT_EQ(d.attributes.at("gpu.nvidia.com/productName"),
              (DraValue{DraValue::Kind::kString, 0, false, "NVIDIA A100-SXM4-80GB"}));
    EXPECT_EQ(d.attributes.at("gpu.nvidia.com/type").text, "gpu");
    EXPECT_EQ(d.attributes.at("gpu.nvidia.com/architecture").text, "Ampere");
    EXPECT_EQ(d.attributes.at("gpu.nvidia.com/cudaComputeCapability"),
              (DraValue{DraValue::Kind::kVersion, 0, false, "8.0.0"}));
    EXPECT_EQ(d.attributes.at("gpu.nvidia.com/driverVersion").text, "550.54.15");
    EXPECT_EQ(d.attributes.at("gpu.nvidia.com/index"),
              (DraValue{DraValue::Kind::kInt, static_cast<int64_t>(i), false, ""}));
    EXPECT_TRUE(d.attributes.at("gpu.nvidia.com/uuid").text.starts_with("GPU-"));
    // A name with a domain keeps it.
    EXPECT_TRUE(d.attributes.contains("resource.kubernetes.io/pcieRoot"));
    EXPECT_FALSE(d.attributes.contains("productName"));
    EXPECT_EQ(d.capacity, (DraCapacities{{"gpu.nvidia.com/memory", 81920LL * 1024 * 1024 * 1000}}));
    EXPECT_TRUE(d.consumes.empty());
  }
}

TEST(DraDecodeSlice, reads_mig_devices) {
  DraSlice s = Slice(DraFixture("slice-mig.json"));
  EXPECT_EQ(s.pool_generation, 3);
  ASSERT_EQ(s.devices.size(), 9u);
  const DraDevice& first = s.devices[0];
  EXPECT_EQ(first.name, "gpu-0-mig-1g10gb-0");
  EXPECT_EQ(first.attributes.at("gpu.nvidia.com/type").text, "mig");
  EXPECT_EQ(first.attributes.at("gpu.nvidia.com/profile").text, "1g.10gb");
  EXPECT_TRUE(first.attributes.at("gpu.nvidia.com/parentUUID").text.starts_with("GPU-"));
  EXPECT_EQ(first.capacity.at("gpu.nvidia.com/memory"), 9856LL * 1024 * 1024 * 1000);
  EXPECT_EQ(first.capacity.at("gpu.nvidia.com/multiprocessors"), 14000);
  EXPECT_EQ(s.devices[8].attributes.at("gpu.nvidia.com/profile").text, "3g.40gb");
  // Every MIG device of a GPU names the same parent.
  EXPECT_EQ(s.devices[6].attributes.at("gpu.nvidia.com/parentUUID"),
            first.attributes.at("gpu.nvidia.com/parentUUID"));
  EXPECT_NE(s.devices[7].attributes.at("gpu.nvidia.com/parentUUID"),
            first.attributes.at("gpu.nvidia.com/parentUUID"));
}

TEST(DraDecodeSlice, reads_shared_counters_and_what_each_device_consumes) {
  DraSlice s = Slice(DraFixture("slice-partitionable.json"));
  ASSERT_EQ(s.shared_counters.size(), 2u);
  const auto& set = s.shared_counters.at("gpu-1-counter-set");
  EXPECT_EQ(set.size(), 10u);
  EXPECT_EQ(set.at("memory"), 81920LL * 1024 * 1024 * 1000);
  EXPECT_EQ(set.at("multiprocessors"), 98000);
  EXPECT_EQ(set.at("memory-slice-7"), 1000);
  ASSERT_EQ(s.devices.size(), 6u);
  EXPECT_EQ(s.devices[0].name, "gpu-0");
  EXPECT_EQ(s.devices[0].consumes.at("gpu-0-counter-set"),
            s.shared_counters.at("gpu-0-counter-set"));
  const DraDevice& mig = s.devices[2];
  EXPECT_EQ(mig.name, "gpu-0-mig-3g40gb-4");
  ASSERT_EQ(mig.consumes.size(), 1u);
  const auto& consumed = mig.consumes.at("gpu-0-counter-set");
  EXPECT_EQ(consumed.at("multiprocessors"), 42000);
  EXPECT_TRUE(consumed.contains("memory-slice-4") && consumed.contains("memory-slice-7"));
  EXPECT_FALSE(consumed.contains("memory-slice-3"));
  // Counter names are not qualified; capacities are.
  EXPECT_TRUE(mig.capacity.contains("gpu.nvidia.com/multiprocessors"));
}

TEST(DraDecodeSlice,
     keeps_no_node_for_all_nodes_and_node_selector_slices_and_reads_nulls_as_empty) {
  DraSlice s =
      Slice(R"({"metadata":{"name":"net"},"spec":{"allNodes":true,"driver":"net.example.com",
      "pool":{"name":"fabric","generation":"7","resourceSliceCount":2},
      "devices":[{"name":"nic-0","attributes":null,"capacity":null,"consumesCounters":null}],
      "sharedCounters":null}})");
  EXPECT_EQ(s.node_name, "");
  EXPECT_EQ(s.pool_generation, 7);
  EXPECT_EQ(s.pool_slice_count, 2);
  ASSERT_EQ(s.devices.size(), 1u);
  EXPECT_EQ(s.devices[0], (DraDevice{"nic-0", {}, {}, {}}));

  s = Slice(R"({"spec":{"driver":"d","nodeSelector":{"nodeSelectorTerms":[]},"devices":null,
      "pool":null,"future":{"x":[1,2]}},"status":{"anything":1}})");
  EXPECT_EQ(s.node_name, "");
  EXPECT_TRUE(s.devices.empty());
  EXPECT_EQ(s.pool_slice_count, 1);
  EXPECT_EQ(Slice(R"({"metadata":null,"spec":null})"), DraSlice());
  // A null kind within an attribute is unset; a domain-qualified name is kept as written.
  s = Slice(SliceWith(
      R"("devices":[{"name":"a","attributes":{"example.com/x":{"int":null,"bool":true}}}])"));
  EXPECT_EQ(s.devices[0].attributes.at("example.com/x"),
            (DraValue{DraValue::Kind::kBool, 0, true, ""}));
}

TEST(DraDecodeClaim, reads_an_unallocated_claim) {
  DraClaim c = Claim(DraFixture("claim-unallocated.json"));
  EXPECT_EQ(c.namespace_name, "ml");
  EXPECT_EQ(c.name, "train-a100");
  EXPECT_FALSE(c.uid.empty());
  ASSERT_EQ(c.requests.size(), 1u);
  const DraDeviceRequest& r = c.requests[0];
  EXPECT_EQ(r.name, "gpus");
  EXPECT_EQ(r.device_class, "gpu.nvidia.com");
  EXPECT_EQ(r.count, 2);
  EXPECT_FALSE(r.all);
  EXPECT_FALSE(r.admin_access);
  EXPECT_TRUE(r.first_available.empty());
  EXPECT_EQ(r.selectors,
            std::vector<std::string>{
                R"(device.attributes["gpu.nvidia.com"].productName == "NVIDIA A100-SXM4-80GB")"});
  EXPECT_EQ(c.constraints,
            (std::vector<DraConstraint>{{{"gpus"}, "resource.kubernetes.io/pcieRoot"}}));
  EXPECT_FALSE(c.allocated);
  EXPECT_TRUE(c.results.empty());
  EXPECT_TRUE(c.reserved_for.empty());
}

TEST(DraDecodeClaim, reads_an_allocated_claim_with_its_results_and_reservations) {
  DraClaim c = Claim(DraFixture("claim-allocated.json"));
  EXPECT_EQ(c.namespace_name, "serving");
  ASSERT_EQ(c.requests.size(), 1u);
  EXPECT_EQ(c.requests[0].count, 1);
  EXPECT_TRUE(c.requests[0].selectors.empty());
  EXPECT_TRUE(c.allocated);
  EXPECT_EQ(
      c.results,
      (std::vector<DraAllocatedDevice>{{"gpu", "gpu.nvidia.com", "dgx-a100-01", "gpu-3", false}}));
  ASSERT_EQ(c.reserved_for.size(), 1u);
  EXPECT_EQ(c.reserved_for[0].size(), 36u);  // a uid
}

TEST(DraDecodeClaim, reads_first_available_alternatives_in_order) {
  DraClaim c = Claim(DraFixture("claim-first-available.json"));
  ASSERT_EQ(c.requests.size(), 1u);
  const DraDeviceRequest& r = c.requests[0];
  EXPECT_EQ(r.name, "gpu");
  EXPECT_EQ(r.device_class, "");
  ASSERT_EQ(r.first_available.size(), 3u);
  EXPECT_EQ(r.first_available[0].name, "h100");
  EXPECT_EQ(r.first_available[0].count, 1);
  EXPECT_EQ(r.first_available[1].name, "a100-pair");
  EXPECT_EQ(r.first_available[1].count, 2);
  EXPECT_EQ(r.first_available[1].selectors.size(), 2u);
  EXPECT_EQ(r.first_available[2].device_class, "mig.nvidia.com");
  EXPECT_EQ(r.first_available[2].selectors,
            std::vector<std::string>{"device.attributes['gpu.nvidia.com'].profile == '3g.40gb'"});
}

TEST(DraDecodeClaim, reads_all_mode_admin_access_and_nulls) {
  DraClaim c = Claim(
      R"({"spec":{"devices":{"requests":[{"name":"all","exactly":{"deviceClassName":"gpu.nvidia.com",
      "allocationMode":"All","adminAccess":true,"selectors":null}}],"constraints":null,"config":[{}]}},
      "status":{"allocation":null,"reservedFor":null}})");
  ASSERT_EQ(c.requests.size(), 1u);
  EXPECT_TRUE(c.requests[0].all);
  EXPECT_TRUE(c.requests[0].admin_access);
  EXPECT_FALSE(c.allocated);
  // An allocation without results still says the claim is allocated.
  EXPECT_TRUE(Claim(R"({"status":{"allocation":{"devices":{"results":null}}}})").allocated);
  EXPECT_EQ(Claim(R"({"metadata":null,"spec":null,"status":null})"), DraClaim());
  EXPECT_EQ(Claim(RequestWith(R"("count":2147483648)")).requests[0].count, int64_t{1} << 31);
}

TEST(DraDecodeDeviceClass, reads_nvidias_classes) {
  DraDeviceClass gpu = Class(DraFixture("deviceclass-gpu.json"));
  EXPECT_EQ(gpu.name, "gpu.nvidia.com");
  EXPECT_EQ(gpu.extended_resource_name, "nvidia.com/gpu");
  EXPECT_EQ(gpu.selectors,
            std::vector<std::string>{"device.driver == 'gpu.nvidia.com' && "
                                     "device.attributes['gpu.nvidia.com'].type == 'gpu'"});
  DraDeviceClass mig = Class(DraFixture("deviceclass-mig.json"));
  EXPECT_EQ(mig.name, "mig.nvidia.com");
  EXPECT_EQ(mig.extended_resource_name, "");
  EXPECT_EQ(mig.selectors.size(), 1u);
  EXPECT_EQ(Class(R"({"metadata":{"name":"c"},"spec":{"selectors":null,"config":null}})"),
            (DraDeviceClass{"c", {}, ""}));
}

TEST(DraDecodeRefusals, wrong_shapes_throw_naming_the_field) {
  struct Case {
    std::string json;
    std::string field;
  };
  for (const Case& c : std::vector<Case>{
           {SliceWith(R"("devices":{"name":"gpu-0"})"), "devices"},
           {SliceWith(R"("devices":[[]])"), "devices: [0]"},
           {SliceWith(R"("pool":[])"), "pool"},
           {SliceWith(R"("pool":{"generation":"one"})"), "generation"},
           {SliceWith(R"("pool":{"generation":-1})"), "generation"},
           {SliceWith(R"("pool":{"resourceSliceCount":0})"), "resourceSliceCount"},
           {SliceWith(R"("pool":{"resourceSliceCount":2147483649})"), "resourceSliceCount"},
           {SliceWith(R"("sharedCounters":{"a":1})"), "sharedCounters"},
           {DeviceWith(R"("attributes":[])"), "attributes"},
           {DeviceWith(R"("attributes":{"type":"gpu"})"), "type"},
           {DeviceWith(R"("attributes":{"type":{}})"), "type: expected exactly one"},
           {DeviceWith(R"("attributes":{"type":{"string":"gpu","int":1}})"), "type"},
           {DeviceWith(R"("attributes":{"index":{"int":"1"}})"), "index: int"},
           {DeviceWith(R"("attributes":{"index":{"int":1.5}})"), "index: int"},
           {DeviceWith(R"("attributes":{"ok":{"bool":"yes"}})"), "ok: bool"},
           {DeviceWith(R"("attributes":{"v":{"version":8}})"), "v: version"},
           {DeviceWith(R"("capacity":{"memory":"80Gi"})"), "memory"},
           {DeviceWith(R"("capacity":{"memory":{}})"), "memory: no value"},
           {DeviceWith(R"("consumesCounters":[{"counterSet":"a","counters":[]}])"), "counters"},
       }) {
    std::string error = ErrorOf(c.json, DecodeDraSlice);
    EXPECT_TRUE(Has(error, c.field)) << c.json << " -> " << error;
  }
  for (
      const Case& c : std::vector<Case>{
          {R"({"metadata":{"name":{}}})", "metadata: name"},
          {R"({"spec":{"devices":{"requests":{}}}})", "requests"},
          {R"({"spec":{"devices":{"requests":[{"name":"r"}]}}})", "neither exactly nor"},
          {R"({"spec":{"devices":{"requests":[{"name":"r","exactly":{},"firstAvailable":[{}]}]}}})",
           "both exactly and firstAvailable"},
          {RequestWith(R"("count":0)"), "count"},
          {RequestWith(R"("count":2147483649)"), "count"},
          {RequestWith(R"("count":"many")"), "count"},
          {RequestWith(R"("allocationMode":"Some")"), "allocationMode"},
          {RequestWith(R"("adminAccess":"true")"), "adminAccess"},
          {RequestWith(R"("selectors":[{"cel":{}}])"), "selectors: [0]: no cel.expression"},
          {RequestWith(R"("selectors":[{"cel":"device.driver"}])"), "selectors: [0]: cel"},
          {RequestWith(R"("selectors":{})"), "selectors"},
          {R"({"spec":{"devices":{"constraints":[{"requests":"a"}]}}})",
           "constraints: [0]: requests"},
          {R"({"status":{"allocation":{"devices":{"results":[{"adminAccess":1}]}}}})",
           "results: [0]: adminAccess"},
          {R"({"status":{"reservedFor":[{"uid":[]}]}})", "reservedFor: [0]: uid"},
      }) {
    std::string error = ErrorOf(c.json, DecodeDraClaim);
    EXPECT_TRUE(Has(error, c.field)) << c.json << " -> " << error;
  }
  EXPECT_TRUE(Has(ErrorOf(R"({"spec":{"selectors":[{}]}})", DecodeDraDeviceClass),
                  "spec: selectors: [0]: no cel.expression"));
  EXPECT_TRUE(Has(ErrorOf(R"({"spec":{"extendedResourceName":{}}})", DecodeDraDeviceClass),
                  "extendedResourceName"));
  // Not JSON at all, or trailing data.
  EXPECT_FALSE(ErrorOf(R"({"spec":)", DecodeDraSlice).empty());
  EXPECT_FALSE(ErrorOf(R"({} {})", DecodeDraClaim).empty());
}

TEST(DraDecodeRefusals, bad_quantities_throw_naming_the_field_and_the_text) {
  std::string error =
      ErrorOf(DeviceWith(R"("capacity":{"memory":{"value":"80 GiB"}})"), DecodeDraSlice);
  EXPECT_TRUE(Has(error, "capacity: memory: value: invalid quantity \"80 GiB\"")) << error;
  error = ErrorOf(DeviceWith(R"("capacity":{"memory":{"value":"-1"}})"), DecodeDraSlice);
  EXPECT_TRUE(Has(error, "memory: value: negative quantity")) << error;
  error = ErrorOf(SliceWith(R"("sharedCounters":[{"name":"c","counters":{"sm":{"value":"x"}}}])"),
                  DecodeDraSlice);
  EXPECT_TRUE(Has(error, "sharedCounters: [0]: counters: sm: value: invalid quantity")) << error;
  error = ErrorOf(
      DeviceWith(R"("consumesCounters":[{"counterSet":"c","counters":{"sm":{"value":null}}}])"),
      DecodeDraSlice);
  EXPECT_TRUE(Has(error, "consumesCounters: [0]: counters: sm: value: invalid quantity")) << error;
}

TEST(DraDecodeRefusals, duplicates_and_a_missing_driver_throw) {
  std::string error = ErrorOf(
      DeviceWith(
          R"("attributes":{"type":{"string":"gpu"},"gpu.nvidia.com/type":{"string":"mig"}})"),
      DecodeDraSlice);
  EXPECT_TRUE(Has(error, "spec: devices: [0]: attributes: duplicate name \"gpu.nvidia.com/type\""))
      << error;
  error =
      ErrorOf(DeviceWith(R"("capacity":{"m":{"value":"1"},"m":{"value":"2"}})"), DecodeDraSlice);
  EXPECT_TRUE(Has(error, "capacity: m: duplicate")) << error;
  error = ErrorOf(SliceWith(R"("sharedCounters":[{"name":"c"},{"name":"c"}])"), DecodeDraSlice);
  EXPECT_TRUE(Has(error, "sharedCounters: [1]: duplicate counter set")) << error;
  error = ErrorOf(R"({"spec":{"devices":[{"name":"gpu-0"}]}})", DecodeDraSlice);
  EXPECT_TRUE(Has(error, "spec: driver: missing")) << error;
  // Without devices there is nothing to qualify.
  EXPECT_EQ(ErrorOf(R"({"spec":{"devices":[]}})", DecodeDraSlice), "");
}

// JSON of `n` copies of `item`, comma-separated.
std::string Repeat(const std::string& item, size_t n) {
  std::string out;
  for (size_t i = 0; i < n; ++i) out += (i ? "," : "") + item;
  return out;
}
// An object of `n` fields named <prefix>0, <prefix>1, ... with the value `v`.
std::string Fields(const std::string& prefix, size_t n, const std::string& v) {
  std::string out;
  for (size_t i = 0; i < n; ++i) out += (i ? ",\"" : "\"") + prefix + std::to_string(i) + "\":" + v;
  return "{" + out + "}";
}

TEST(DraDecodeRefusals, past_the_bounds_throws) {
  const std::string device = R"({"name":"d"})";
  EXPECT_EQ(Slice(SliceWith(R"("devices":[)" + Repeat(device, kMaxDraDevicesPerSlice) + "]"))
                .devices.size(),
            kMaxDraDevicesPerSlice);
  std::string error =
      ErrorOf(SliceWith(R"("devices":[)" + Repeat(device, kMaxDraDevicesPerSlice + 1) + "]"),
              DecodeDraSlice);
  EXPECT_TRUE(Has(error, "spec: devices: more than 128 entries")) << error;

  const std::string attr = R"({"int":1})";
  const std::string cap = R"({"value":"1"})";
  EXPECT_EQ(Slice(DeviceWith(R"("attributes":)" + Fields("a", kMaxDraAttributesPerDevice, attr)))
                .devices[0]
                .attributes.size(),
            kMaxDraAttributesPerDevice);
  error =
      ErrorOf(DeviceWith(R"("attributes":)" + Fields("a", kMaxDraAttributesPerDevice / 2, attr) +
                         R"(,"capacity":)" + Fields("c", kMaxDraAttributesPerDevice / 2 + 1, cap)),
              DecodeDraSlice);
  EXPECT_TRUE(Has(error, "capacity: c32: more than 64 attributes and capacities")) << error;

  const std::string request = R"({"name":"r","exactly":{"deviceClassName":"c"}})";
  EXPECT_EQ(Claim(R"({"spec":{"devices":{"requests":[)" + Repeat(request, kMaxDraRequestsPerClaim) +
                  "]}}}")
                .requests.size(),
            kMaxDraRequestsPerClaim);
  error = ErrorOf(
      R"({"spec":{"devices":{"requests":[)" + Repeat(request, kMaxDraRequestsPerClaim + 1) + "]}}}",
      DecodeDraClaim);
  EXPECT_TRUE(Has(error, "spec: devices: requests: more than 32 entries")) << error;
  error = ErrorOf(R"({"spec":{"devices":{"requests":[{"name":"r","firstAvailable":[)" +
                      Repeat(request, kMaxDraRequestsPerClaim + 1) + "]}]}}}",
                  DecodeDraClaim);
  EXPECT_TRUE(Has(error, "firstAvailable: more than 32 entries")) << error;

  const std::string longest(kMaxDraSelectorBytes, 'x');
  EXPECT_EQ(Class(R"({"spec":{"selectors":[{"cel":{"expression":")" + longest + "\"}}]}}")
                .selectors[0]
                .size(),
            kMaxDraSelectorBytes);
  error = ErrorOf(R"({"spec":{"selectors":[{"cel":{"expression":")" + longest + "x\"}}]}}",
                  DecodeDraDeviceClass);
  EXPECT_TRUE(Has(error, "selectors: [0]: cel.expression longer than 10240 bytes")) << error;
  error = ErrorOf(R"({"status":{"reservedFor":[)" + Repeat("{}", kMaxDraListEntries + 1) + "]}}",
                  DecodeDraClaim);
  EXPECT_TRUE(Has(error, "reservedFor: more than 256 entries")) << error;

  // Counters are counted over the whole slice, shared and consumed.
  const std::string set = R"({"name":"s","counters":)" + Fields("c", 2000, cap) + "}";
  const std::string consumes = R"({"name":"d","consumesCounters":[{"counterSet":"s","counters":)" +
                               Fields("c", 2000, cap) + "}]}";
  EXPECT_EQ(ErrorOf(SliceWith(R"("sharedCounters":[)" + set + R"(],"devices":[)" + consumes + "]"),
                    DecodeDraSlice),
            "");
  error = ErrorOf(SliceWith(R"("sharedCounters":[)" + set + R"(],"devices":[)" + consumes + "," +
                            consumes + "]"),
                  DecodeDraSlice);
  EXPECT_TRUE(Has(error, "more than 4096 counters")) << error;
}

// Issue #48: a refusal for a bound names it (the reason gpusched_inventory_objects_skipped_total
// counts it under), an invalid object none.
TEST(DraDecodeRefusals, a_refusal_past_a_bound_names_the_bound) {
  const std::string device = R"({"name":"d"})";
  EXPECT_EQ(BoundOf(SliceWith(R"("devices":[)" + Repeat(device, kMaxDraDevicesPerSlice + 1) + "]"),
                    DecodeDraSlice),
            "dra_devices_per_slice");
  EXPECT_EQ(BoundOf(DeviceWith(R"("attributes":)" +
                               Fields("a", kMaxDraAttributesPerDevice + 1, R"({"int":1})")),
                    DecodeDraSlice),
            "dra_attributes_per_device");
  const std::string set =
      R"({"name":"s","counters":)" + Fields("c", kMaxDraCountersPerSlice, R"({"value":"1"})") + "}";
  EXPECT_EQ(BoundOf(SliceWith(R"("sharedCounters":[)" + set + "]"), DecodeDraSlice),
            "dra_counters_per_slice");
  const std::string request = R"({"name":"r","exactly":{"deviceClassName":"c"}})";
  EXPECT_EQ(BoundOf(R"({"spec":{"devices":{"requests":[)" +
                        Repeat(request, kMaxDraRequestsPerClaim + 1) + "]}}}",
                    DecodeDraClaim),
            "dra_requests_per_claim");
  EXPECT_EQ(BoundOf(R"({"status":{"reservedFor":[)" + Repeat("{}", kMaxDraListEntries + 1) + "]}}",
                    DecodeDraClaim),
            "dra_list_entries");
  const std::string longer(kMaxDraSelectorBytes + 1, 'x');
  EXPECT_EQ(BoundOf(R"({"spec":{"selectors":[{"cel":{"expression":")" + longer + "\"}}]}}",
                    DecodeDraDeviceClass),
            "dra_selector_bytes");
  EXPECT_EQ(BoundOf(SliceWith(R"("pool":{"generation":-1})"), DecodeDraSlice), "invalid");
  EXPECT_EQ(BoundOf(SliceWith(R"("devices":[)" + Repeat(device, 2) + "]"), DecodeDraSlice), "");
}

}  // namespace
}  // namespace gpusched::dra_decode_test
