#include "text/bounded_json.h"

#include <nlohmann/json.hpp>

#include <fstream>
#include <vector>

#include "text/sanitize.h"

namespace ranktest::text {
namespace {

// A byte-at-a-time JSON scanner that knows only what bounding needs:
// whether it is inside a string (and an escape), and the arrays open
// around it. It never builds a value, so a file of any size costs the
// bounded text it emits.
class Bounder {
 public:
  Bounder(const std::string& whole_is_in, const JsonBounds& bounds, BoundedJson& out)
      : bounds_(bounds), out_(out) {
    // The marker goes inside a JSON string: escaped as JSON, valid UTF-8.
    const std::string where = nlohmann::json(repair_utf8(whole_is_in)).dump();
    marker_ = "…[cut by ranktest; the whole is in " + where.substr(1, where.size() - 2) + "]";
  }

  void feed(std::string_view chunk) {
    for (const char c : chunk) step(c);
  }

 private:
  struct Open {
    bool array = false;
    std::uint64_t elements = 0;  // commas seen at this level, plus one
  };

  void emit(char c) {
    if (skip_from_ == 0) out_.text += c;
  }

  void step(char c) {
    const auto byte = static_cast<unsigned char>(c);
    if (in_string_) {
      if (escape_left_ != 0) {
        if (escape_left_ == kEscapeLetter) escape_left_ = c == 'u' ? 4 : 0;
        else --escape_left_;
        if (!cutting_) emit(c);
        return;
      }
      if (c == '"') {
        in_string_ = false;
        cutting_ = false;
        emit(c);
        return;
      }
      // Cut only where a character starts and no escape is open, so what
      // is kept is valid UTF-8 and valid JSON.
      if (!cutting_ && string_bytes_ >= bounds_.max_string_bytes && (byte & 0xC0) != 0x80) {
        cutting_ = true;
        if (skip_from_ == 0) {
          out_.text += marker_;
          ++out_.strings_cut;
        }
      }
      if (c == '\\') escape_left_ = kEscapeLetter;
      ++string_bytes_;
      if (!cutting_) emit(c);
      return;
    }
    switch (c) {
      case '"':
        in_string_ = true;
        string_bytes_ = 0;
        break;
      case '[':
      case '{':
        open_.push_back({c == '[', 1});
        break;
      case ']':
      case '}':
        if (!open_.empty()) {
          // Closing the array whose elements were being left out.
          if (skip_from_ == open_.size()) {
            skip_from_ = 0;
            out_.elements_dropped += open_.back().elements - bounds_.max_array_elements;
          }
          open_.pop_back();
        }
        break;
      case ',':
        if (!open_.empty() && open_.back().array && skip_from_ == 0 &&
            open_.back().elements == bounds_.max_array_elements) {
          skip_from_ = open_.size();  // this comma and all up to the ']'
        }
        if (!open_.empty() && open_.back().array) ++open_.back().elements;
        break;
      default:
        break;
    }
    emit(c);
  }

  static constexpr int kEscapeLetter = -1;
  const JsonBounds& bounds_;
  BoundedJson& out_;
  std::string marker_;
  std::vector<Open> open_;
  bool in_string_ = false;
  bool cutting_ = false;
  int escape_left_ = 0;
  std::size_t string_bytes_ = 0;
  // While elements of an array are left out: its depth (open_.size()); 0
  // when nothing is left out.
  std::size_t skip_from_ = 0;
};

}  // namespace

BoundedJson bound_json(std::string_view json, const std::string& whole_is_in,
                       const JsonBounds& bounds) {
  BoundedJson out;
  out.file_bytes = json.size();
  Bounder bounder(whole_is_in, bounds, out);
  bounder.feed(json);
  return out;
}

BoundedJson read_json_bounded(const std::filesystem::path& path, const JsonBounds& bounds) {
  BoundedJson out;
  std::ifstream in(path, std::ios::binary);
  if (!in) return out;
  Bounder bounder(path.string(), bounds, out);
  std::vector<char> chunk(64 * 1024);
  while (in) {
    in.read(chunk.data(), static_cast<std::streamsize>(chunk.size()));
    const auto got = static_cast<std::size_t>(in.gcount());
    if (got == 0) break;
    out.file_bytes += got;
    bounder.feed(std::string_view(chunk.data(), got));
  }
  return out;
}

}  // namespace ranktest::text
