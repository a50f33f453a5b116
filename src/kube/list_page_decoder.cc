#include "gpusched/kube/list_page_decoder.h"

#include <algorithm>

#include "gpusched/codec/k8s_decode.h"
#include "gpusched/kube/reflector.h"  // ReflectorSink, which the header only declares

namespace gpusched {
namespace {

bool IsSpace(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }

// Longest top-level key compared: "metadata" and "items" are shorter.
constexpr size_t kMaxKeyBytes = 16;

}  // namespace

ListPageDecoder::ListPageDecoder(ReflectorSink& sink, ObjectSkips& skips, size_t max_object_bytes)
    : sink_(sink), skips_(skips), max_object_bytes_(max_object_bytes) {}

void ListPageDecoder::Feed(std::string_view bytes) {
  for (char c : bytes) {
    if (in_string_) {
      bool closes = !escaped_ && c == '"';
      escaped_ = !escaped_ && c == '\\';
      if (!in_key_) {
        Keep(c);
      } else if (!closes && key_.size() < kMaxKeyBytes) {
        key_ += c;
      }
      if (closes) in_string_ = in_key_ = false;
    } else if (done_) {
      if (!IsSpace(c)) throw DecodeError("data after the list");
    } else if (!started_) {
      if (IsSpace(c)) continue;
      if (c != '{') throw DecodeError("a list page is a JSON object");
      started_ = expect_key_ = true;
      depth_ = 1;
    } else {
      Structural(c);
    }
  }
}

void ListPageDecoder::Structural(char c) {
  if (depth_ == 1 && expect_key_ && c != '"' && c != ':' && c != '}' && !IsSpace(c)) {
    throw DecodeError("expected a key in the list");
  }
  bool in_items = depth_ == 2 && value_ == Value::kItems;
  if (in_items && !item_started_ && !IsSpace(c) && c != ',' && c != ']') StartItem(c);
  switch (c) {
    case '"':
      in_string_ = true;
      if (depth_ == 1 && expect_key_) {
        in_key_ = true;
        key_.clear();
        return;
      }
      Keep(c);
      return;
    case '{':
    case '[':
      Open(c);
      return;
    case '}':
    case ']':
      Close(c);
      return;
    case ':':
      if (depth_ == 1) {
        expect_key_ = false;
        value_ = key_ == "metadata" ? Value::kMetadata
                 : key_ == "items"  ? Value::kItems
                                    : Value::kOther;
        return;
      }
      break;
    case ',':
      if (depth_ == 1) {
        expect_key_ = true;
        value_ = Value::kOther;
        return;
      }
      if (in_items) {
        item_started_ = false;
        return;
      }
      break;
  }
  Keep(c);
}

void ListPageDecoder::Open(char c) {
  if (depth_ == 1 && value_ == Value::kItems && c != '[') {
    throw DecodeError("items of a list page is no array");
  }
  if (depth_ == 1) value_opened_ = c;
  if (depth_ == 1 && value_ == Value::kMetadata && c == '{') {
    in_metadata_ = true;
    metadata_.clear();
  }
  Keep(c);
  ++depth_;
}

void ListPageDecoder::Close(char c) {
  if (depth_ == 1) {
    if (c != '}') throw DecodeError("unbalanced brackets in the list");
    depth_ = 0;
    done_ = true;
    return;
  }
  // Within an item simdjson checks the brackets; between items, this does.
  if (depth_ == 2 && c != (value_opened_ == '{' ? '}' : ']')) {
    throw DecodeError("unbalanced brackets in the list");
  }
  Keep(c);
  --depth_;
  if (depth_ == 2 && in_item_) {
    EndItem();
  } else if (depth_ == 1 && in_metadata_) {
    in_metadata_ = false;
  } else if (depth_ == 1) {
    item_started_ = false;
    value_ = Value::kOther;  // the value (the items' array, say) is over
  }
}

void ListPageDecoder::Keep(char c) {
  if (in_item_) {
    if (item_oversized_) return;
    if (item_.size() >= max_object_bytes_) {
      item_oversized_ = true;
      peak_ = std::max(peak_, item_.size());
      return;
    }
    item_ += c;
  } else if (in_metadata_) {
    if (metadata_.size() >= kMaxListMetadataBytes) {
      throw DecodeError("list metadata over " + std::to_string(kMaxListMetadataBytes) + " bytes");
    }
    metadata_ += c;
  }
}

void ListPageDecoder::StartItem(char c) {
  item_started_ = true;
  ++items_;
  if (c != '{') {
    skips_.Malformed("a listed item that is no object", "not a JSON object");
    return;
  }
  in_item_ = true;
  item_oversized_ = false;
  item_.clear();
}

void ListPageDecoder::EndItem() {
  in_item_ = false;
  peak_ = std::max(peak_, item_.size());
  if (item_oversized_) {
    skips_.Oversized("a listed object", max_object_bytes_);
    return;
  }
  thread_local simdjson::ondemand::parser parser;
  item_.reserve(item_.size() + simdjson::SIMDJSON_PADDING);
  skips_.Isolated("an unusable listed object", [&] {
    simdjson::ondemand::document doc =
        parser.iterate(simdjson::padded_string_view(item_.data(), item_.size(), item_.capacity()));
    sink_.AddListed(doc.get_object());
  });
}

ListPage ListPageDecoder::Finish() {
  if (!done_) throw DecodeError(started_ ? "the list page ended midway" : "an empty list page");
  ListPage page;
  if (metadata_.empty()) return page;
  WithContext("list metadata", [&] {
    thread_local simdjson::ondemand::parser parser;
    simdjson::padded_string text(metadata_);
    simdjson::ondemand::document doc = parser.iterate(text);
    for (simdjson::ondemand::field m : doc.get_object()) {
      std::string_view key = m.unescaped_key();
      if (key == "resourceVersion") page.resource_version = std::string(ScalarText(m.value()));
      if (key == "continue") page.continue_token = std::string(ScalarText(m.value()));
    }
  });
  return page;
}

}  // namespace gpusched
