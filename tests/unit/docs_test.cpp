// The documentation describes what the code does: every configuration key,
// exit code and event kind appears in docs/.
#include <gtest/gtest.h>

#include <fstream>
#include <regex>
#include <sstream>

#include "app/exit_code.h"
#include "config/config.h"
#include "events/event_json.h"

namespace ranktest {
namespace {

std::string read_doc(const std::string& name) {
  std::ifstream in(std::string(RANKTEST_SOURCE_DIR) + "/docs/" + name);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// docs/adapters.md explains every question a framework adapter answers:
// a method added to the interface without a word there fails here.
TEST(Docs, AdapterGuideNamesEveryMethodOfTheInterface) {
  const auto doc = read_doc("adapters.md");
  ASSERT_FALSE(doc.empty());
  std::ifstream in(std::string(RANKTEST_SOURCE_DIR) + "/src/frameworks/framework_adapter.h");
  std::stringstream header;
  header << in.rdbuf();
  const std::string text = header.str();
  const std::regex method(R"(virtual [^;{]*?\b(\w+)\()");
  int methods = 0;
  for (std::sregex_iterator it(text.begin(), text.end(), method), end; it != end; ++it) {
    const auto name = (*it)[1].str();
    if (name == "FrameworkAdapter") continue;
    ++methods;
    EXPECT_NE(doc.find("`" + name + "`"), std::string::npos) << name;
  }
  EXPECT_GE(methods, 6);
}

TEST(Docs, ConfigurationReferenceNamesEveryKey) {
  const auto doc = read_doc("configuration.md");
  ASSERT_FALSE(doc.empty());
  for (const auto* keys : {&config::KnownKeys::top_level(), &config::KnownKeys::source(),
                           &config::KnownKeys::override_table()})
    for (const auto& key : *keys)
      EXPECT_NE(doc.find("`" + key + "`"), std::string::npos) << key;
  // The launcher tables are described where the launchers are.
  const auto launchers = read_doc("launchers.md");
  ASSERT_FALSE(launchers.empty());
  for (const auto* kind : launchers::launcher_kinds())
    for (const auto& key : kind->table_keys())
      EXPECT_NE(launchers.find("| `" + key + "` |"), std::string::npos) << key;
}

TEST(Docs, ExitCodesAreAllDocumented) {
  const auto doc = read_doc("exit-codes.md");
  ASSERT_FALSE(doc.empty());
  for (const auto& code : app::exit_code_docs())
    EXPECT_NE(doc.find("| " + std::to_string(code.code) + " |"), std::string::npos)
        << code.code;
}

TEST(Docs, EventSchemaNamesEveryEventAndField) {
  const auto doc = read_doc("events.md");
  ASSERT_FALSE(doc.empty());
  events::TestFinished finished;
  finished.result.exit = ProcessExit{};
  for (const events::Event& event :
       {events::Event(events::RunStarted{}), events::Event(events::TestStarted{}),
        events::Event(events::TestSlow{}),
        events::Event(finished), events::Event(events::RunFinished{})}) {
    const auto json = events::to_json(event);
    EXPECT_NE(doc.find("`" + std::string(events::kind_name(event)) + "`"), std::string::npos);
    // Every field, nested ones too, is described.
    std::vector<const nlohmann::ordered_json*> objects{&json};
    while (!objects.empty()) {
      const auto* object = objects.back();
      objects.pop_back();
      for (auto it = object->begin(); it != object->end(); ++it) {
        EXPECT_NE(doc.find("`" + it.key() + "`"), std::string::npos)
            << events::kind_name(event) << ": " << it.key();
        if (it->is_object()) objects.push_back(&*it);
      }
    }
  }
}

}  // namespace
}  // namespace ranktest
