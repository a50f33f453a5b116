// ListPageDecoder: a LIST page decoded as its bytes arrive, so that a page costs about one object,
// not the page: the API server pages by count, and 500 fat pods make a page of half a gigabyte.
//
// The page's envelope ({"metadata": {...}, "items": [...]}) is scanned byte by byte, as a JSON
// tokenizer does (strings, escapes, nesting); each item is gathered on its own and, once whole,
// parsed and handed to the sink inside ObjectSkips::Isolated (gpusched/kube/watch_stream.h), so a
// bad item is skipped and counted. An item longer than `max_object_bytes` is not gathered: its
// bytes are dropped as they pass, and it is counted as oversized. The envelope's metadata (its
// resourceVersion and continue token) is gathered too, within kMaxListMetadataBytes. Top-level
// keys are compared as written: the API server never escapes "metadata" or "items".
//
// What is no list (a top-level value that is not an object, "items" that is not an array,
// unbalanced brackets, a page that ends midway) throws DecodeError; the items handed over before
// stay handed over (the reflector then lists again). Not synchronized: one page, one decoder.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "gpusched/kube/watch_stream.h"

namespace gpusched {

// A list's metadata holds a version and a continue token of a few hundred bytes.
inline constexpr size_t kMaxListMetadataBytes = 64 * 1024;

class ListPageDecoder {
 public:
  ListPageDecoder(ReflectorSink& sink, ObjectSkips& skips, size_t max_object_bytes);

  // Decodes the next bytes of the page, handing every item they complete to the sink.
  void Feed(std::string_view bytes);
  // After the page's last byte: its metadata. Throws DecodeError when the page is incomplete.
  ListPage Finish();

  // Items met so far: handed over or skipped.
  uint64_t items() const { return items_; }
  // The most bytes held at once for one item or the metadata.
  size_t peak_buffer_bytes() const { return peak_; }

 private:
  enum class Value { kOther, kMetadata, kItems };
  void Structural(char c);
  void Open(char c);
  void Close(char c);
  void Keep(char c);
  void StartItem(char c);
  void EndItem();

  ReflectorSink& sink_;
  ObjectSkips& skips_;
  size_t max_object_bytes_;
  int64_t depth_ = 0;  // 1: inside the envelope; 2: inside "items" (or another value)
  bool started_ = false;
  bool done_ = false;
  bool in_string_ = false;
  bool escaped_ = false;
  bool expect_key_ = false;  // at depth 1, the next string is a key
  bool in_key_ = false;
  std::string key_;              // the current top-level key, as written (cut at 16 bytes)
  Value value_ = Value::kOther;  // which top-level value the scanner is in
  char value_opened_ = 0;        // the bracket that opened it, if any
  bool in_metadata_ = false;
  std::string metadata_;
  bool item_started_ = false;  // within an element of "items"
  bool in_item_ = false;       // gathering an object of "items"
  bool item_oversized_ = false;
  std::string item_;
  uint64_t items_ = 0;
  size_t peak_ = 0;
};

}  // namespace gpusched
