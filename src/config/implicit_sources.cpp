// What ranktest runs where no ranktest.toml names a source: each
// framework says what a folder or a path on the command line holds of it
// (FrameworkKind::implied_by_folder, source_of_path).
#include "config/implicit_sources.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "frameworks/framework_kind.h"
#include "text/word_list.h"

namespace ranktest::config {

ImpliedSources sources_of_folder(const std::filesystem::path& folder) {
  ImpliedSources implied;
  for (const auto* framework : frameworks::all_frameworks())
    if (auto found = framework->implied_by_folder(folder)) {
      implied.found.push_back(std::move(found->found));
      implied.sources.push_back(std::move(found->source));
    }
  return implied;
}

Expected<SourceConfig> source_of_path(const std::string& path) {
  const auto& all = frameworks::all_frameworks();
  for (auto it = all.rbegin(); it != all.rend(); ++it)
    if (auto source = (*it)->source_of_path(path)) return std::move(*source);
  return Error{fmt::format("{}: a folder with no tests ranktest can run in it ({}); name {}", path,
                           what_ranktest_looks_for(), command_line_paths())};
}

std::string what_ranktest_looks_for() {
  std::vector<std::string_view> marks;
  for (const auto* framework : frameworks::all_frameworks())
    if (!framework->folder_marks().empty()) marks.push_back(framework->folder_marks());
  return fmt::format("no {}", fmt::join(marks, "; no "));
}

std::string command_line_paths() {
  std::vector<std::string> paths;
  for (const auto* framework : frameworks::all_frameworks())
    paths.emplace_back(framework->command_line_path());
  return text::word_list(paths, ", or ");
}

}  // namespace ranktest::config
