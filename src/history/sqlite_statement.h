// A prepared SQLite statement, as the history's queries use it.
#pragma once

#include <sqlite3.h>

#include <cstdint>
#include <string>

namespace ranktest::history {

// A prepared statement, finalized on scope exit unless it was lent.
class Statement {
 public:
  Statement(sqlite3* db, const char* sql) { sqlite3_prepare_v2(db, sql, -1, &statement_, nullptr); }
  // Reuses a statement prepared earlier: reset, bindings cleared, kept.
  explicit Statement(sqlite3_stmt* lent) : statement_(lent), owned_(false) {
    sqlite3_reset(statement_);
    sqlite3_clear_bindings(statement_);
  }
  ~Statement() {
    if (owned_) sqlite3_finalize(statement_);
    else sqlite3_reset(statement_);
  }
  Statement(const Statement&) = delete;
  Statement& operator=(const Statement&) = delete;
  bool ok() const { return statement_ != nullptr; }
  Statement& bind(int index, const std::string& text) {
    sqlite3_bind_text(statement_, index, text.data(), static_cast<int>(text.size()),
                      SQLITE_TRANSIENT);
    return *this;
  }
  Statement& bind(int index, std::int64_t number) {
    sqlite3_bind_int64(statement_, index, number);
    return *this;
  }
  Statement& bind_null(int index) {
    sqlite3_bind_null(statement_, index);
    return *this;
  }
  int step() { return sqlite3_step(statement_); }
  std::string text(int column) const {
    const auto* bytes = sqlite3_column_text(statement_, column);
    return bytes ? std::string(reinterpret_cast<const char*>(bytes),
                               static_cast<std::size_t>(sqlite3_column_bytes(statement_, column)))
                 : std::string();
  }
  std::int64_t number(int column) const { return sqlite3_column_int64(statement_, column); }
  bool is_null(int column) const { return sqlite3_column_type(statement_, column) == SQLITE_NULL; }

 private:
  sqlite3_stmt* statement_ = nullptr;
  bool owned_ = true;
};

}  // namespace ranktest::history
