#include "history/history_page.h"

#include <fmt/format.h>

#include <algorithm>
#include <nlohmann/json.hpp>

#include "model/outcome.h"
#include "text/sanitize.h"

namespace ranktest::history {
namespace {

using Json = nlohmann::ordered_json;

// How many tests each section but "every test" names.
constexpr std::size_t kSectionSize = 15;

struct Figures {
  std::string id;
  std::int64_t median_ms = 0;
  std::size_t failed = 0, flaky = 0, flips = 0;
  std::size_t streak = 0;   // runs not passed in a row, up to its newest
  double growth = 0;        // newest duration / median of the ones before
};

bool passed(const RunVerdicts::Point& point) {
  const auto outcome = outcome_from_string(point.outcome);
  return outcome && ended_cleanly(*outcome);
}

Figures figures_of(const std::string& id, const std::vector<RunVerdicts::Point>& points) {
  Figures figures{id};
  std::vector<std::int64_t> durations;
  std::optional<bool> last;
  for (const auto& point : points) {
    const bool ok = passed(point);
    figures.failed += !ok;
    figures.flaky += point.flaky;
    if (last && *last != ok) ++figures.flips;
    last = ok;
    figures.streak = ok ? 0 : figures.streak + 1;
    durations.push_back(point.duration.count());
  }
  auto sorted = durations;
  std::sort(sorted.begin(), sorted.end());
  if (!sorted.empty()) figures.median_ms = sorted[sorted.size() / 2];
  if (durations.size() >= 3) {
    std::vector<std::int64_t> before(durations.begin(), durations.end() - 1);
    std::sort(before.begin(), before.end());
    const auto typical = before[before.size() / 2];
    // Below 20 ms a test's time is noise.
    if (typical > 0 && durations.back() >= 20)
      figures.growth = static_cast<double>(durations.back()) / static_cast<double>(typical);
  }
  return figures;
}

template <typename Better, typename Keep>
Json section(const std::vector<Figures>& all, Better better, Keep keep) {
  std::vector<std::size_t> order;
  for (std::size_t i = 0; i < all.size(); ++i)
    if (keep(all[i])) order.push_back(i);
  std::stable_sort(order.begin(), order.end(),
                   [&](std::size_t a, std::size_t b) { return better(all[a], all[b]); });
  if (order.size() > kSectionSize) order.resize(kSectionSize);
  return Json(order);
}

constexpr std::string_view kPage = R"PAGE(<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>ranktest history</title>
<style>
body { font: 14px/1.4 system-ui, sans-serif; margin: 1.5em; color: #222; }
h1 { font-size: 1.3em; } h2 { font-size: 1.1em; margin-top: 1.6em; }
table { border-collapse: collapse; } td, th { padding: 2px 10px 2px 0; text-align: left; vertical-align: middle; }
th { font-weight: 600; border-bottom: 1px solid #ccc; }
td.id { font-family: ui-monospace, monospace; max-width: 48em; overflow-wrap: anywhere; }
td.num { text-align: right; font-variant-numeric: tabular-nums; }
.strip { display: inline-flex; gap: 1px; } .cell { width: 8px; height: 14px; background: #eee; }
.o-pass { background: #2e9d4a; } .o-flaky { background: #e8a317; } .o-fail { background: #d7263d; }
.o-skip { background: #9aa3ad; } .o-none { background: #d9dde1; }
.legend span { margin-right: 1em; } .legend .cell { display: inline-block; vertical-align: middle; margin-right: 4px; }
.empty { color: #777; }
</style></head><body>
<h1 id="title"></h1>
<p id="about"></p>
<p class="legend"><span><i class="cell o-pass"></i>passed</span><span><i class="cell o-flaky"></i>flaky (passed on a retry)</span><span><i class="cell o-fail"></i>did not pass</span><span><i class="cell o-skip"></i>skipped</span><span><i class="cell o-none"></i>not run, interrupted</span><span><i class="cell"></i>not in that run</span></p>
<div id="sections"></div>
<script id="ranktest-history" type="application/json">@DATA@</script>
<script>
"use strict";
(function () {
  const data = JSON.parse(document.getElementById("ranktest-history").textContent);
  document.title = data.title;
  document.getElementById("title").textContent = data.title;
  document.getElementById("about").textContent =
    data.runs.length + " runs, " + data.tests.length + " tests" +
    (data.runs.length ? ", from " + data.runs[0].started + " to " + data.runs[data.runs.length - 1].started : "");
  const SVG = "http://www.w3.org/2000/svg";
  function tone(point) {
    if (point.flaky) return "o-flaky";
    if (["passed", "xpassed"].includes(point.outcome)) return "o-pass";
    if (["skipped", "xfailed"].includes(point.outcome)) return "o-skip";
    if (["not-run", "interrupted"].includes(point.outcome)) return "o-none";
    return "o-fail";
  }
  function strip(test) {
    const box = document.createElement("span");
    box.className = "strip";
    const byRun = new Map(test.points.map((p) => [p.run, p]));
    data.runs.forEach((run, i) => {
      const cell = document.createElement("i");
      const point = byRun.get(i);
      cell.className = "cell" + (point ? " point " + tone(point) : "");
      cell.title = run.id + ": " + (point ? point.outcome + (point.flaky ? " (flaky)" : "") + ", " + (point.ms / 1000).toFixed(3) + " s" : "not in this run");
      box.appendChild(cell);
    });
    return box;
  }
  function sparkline(test) {
    const width = Math.max(60, data.runs.length * 9), height = 18;
    const svg = document.createElementNS(SVG, "svg");
    svg.setAttribute("width", width); svg.setAttribute("height", height);
    svg.setAttribute("class", "spark");
    const most = Math.max(1, ...test.points.map((p) => p.ms));
    const x = (p) => (data.runs.length < 2 ? width / 2 : (p.run / (data.runs.length - 1)) * (width - 4) + 2);
    const y = (p) => height - 2 - (p.ms / most) * (height - 4);
    const line = document.createElementNS(SVG, "polyline");
    line.setAttribute("points", test.points.map((p) => x(p) + "," + y(p)).join(" "));
    line.setAttribute("fill", "none"); line.setAttribute("stroke", "#4a6fa5"); line.setAttribute("stroke-width", "1.5");
    svg.appendChild(line);
    for (const p of test.points) {
      const dot = document.createElementNS(SVG, "circle");
      dot.setAttribute("cx", x(p)); dot.setAttribute("cy", y(p)); dot.setAttribute("r", "1.8");
      dot.setAttribute("fill", "#4a6fa5");
      svg.appendChild(dot);
    }
    return svg;
  }
  function cell(row, text, className) {
    const td = document.createElement("td");
    if (className) td.className = className;
    if (text instanceof Node) td.appendChild(text); else td.textContent = text;
    row.appendChild(td);
  }
  function table(key, heading, indexes, extra) {
    const section = document.createElement("section");
    section.id = key;
    const h2 = document.createElement("h2");
    h2.textContent = heading;
    section.appendChild(h2);
    if (!indexes.length) {
      const p = document.createElement("p");
      p.className = "empty"; p.textContent = "none";
      section.appendChild(p);
    } else {
      const t = document.createElement("table");
      const head = t.createTHead().insertRow();
      for (const name of ["test", "median", extra[0], "outcomes, oldest first", "duration"]) {
        const th = document.createElement("th"); th.textContent = name; head.appendChild(th);
      }
      const body = t.createTBody();
      for (const i of indexes) {
        const test = data.tests[i];
        const row = body.insertRow();
        row.dataset.test = test.id;
        cell(row, test.id, "id");
        cell(row, (test.median_ms / 1000).toFixed(3) + " s", "num");
        cell(row, extra[1](test), "num");
        cell(row, strip(test));
        cell(row, sparkline(test));
      }
      section.appendChild(t);
    }
    document.getElementById("sections").appendChild(section);
  }
  const s = data.sections;
  table("slowest", "Slowest (median duration)", s.slowest, ["runs", (t) => String(t.points.length)]);
  table("flakiest", "Flakiest (passes on a retry, and changes between passing and failing)", s.flakiest,
        ["flaky + flips", (t) => t.flaky + " + " + t.flips]);
  table("grew", "Grew most (newest duration against the median before it)", s.grew,
        ["growth", (t) => t.growth.toFixed(2) + "x"]);
  table("streaks", "Failure streaks (did not pass in its latest runs, in a row)", s.streaks,
        ["streak", (t) => String(t.streak)]);
  table("all", "Every test", data.tests.map((_, i) => i), ["did not pass", (t) => String(t.failed)]);
})();
</script>
</body></html>
)PAGE";

}  // namespace

std::string history_page(const RunVerdicts& verdicts, const std::string& title) {
  std::vector<Figures> all;
  Json tests = Json::array();
  for (const auto& [id, points] : verdicts.tests) {
    all.push_back(figures_of(id, points));
    const auto& figures = all.back();
    Json drawn = Json::array();
    for (const auto& point : points)
      drawn.push_back({{"run", point.run}, {"outcome", point.outcome},
                       {"ms", point.duration.count()}, {"flaky", point.flaky}});
    tests.push_back({{"id", text::repair_utf8(id)}, {"points", std::move(drawn)},
                     {"median_ms", figures.median_ms}, {"failed", figures.failed},
                     {"flaky", figures.flaky}, {"flips", figures.flips},
                     {"streak", figures.streak}, {"growth", figures.growth}});
  }
  Json runs = Json::array();
  for (const auto& run : verdicts.runs)
    runs.push_back({{"id", run.run_id}, {"started", run.started_at.substr(0, 19)}});
  const Json sections = {
      {"slowest", section(all, [](const Figures& a, const Figures& b) { return a.median_ms > b.median_ms; },
                          [](const Figures&) { return true; })},
      {"flakiest", section(all,
                           [](const Figures& a, const Figures& b) {
                             return a.flaky + a.flips > b.flaky + b.flips;
                           },
                           [](const Figures& f) { return f.flaky + f.flips > 0; })},
      {"grew", section(all, [](const Figures& a, const Figures& b) { return a.growth > b.growth; },
                       [](const Figures& f) { return f.growth >= 1.2; })},
      {"streaks", section(all, [](const Figures& a, const Figures& b) { return a.streak > b.streak; },
                          [](const Figures& f) { return f.streak >= 2; })}};
  const Json data = {{"title", text::repair_utf8(title)}, {"runs", std::move(runs)},
                     {"tests", std::move(tests)}, {"sections", sections}};
  std::string page(kPage);
  // The title is the data's: the page's script sets it.
  page.replace(page.find("@DATA@"), 6,
               text::script_safe_json(data.dump(-1, ' ', false, Json::error_handler_t::replace)));
  return page;
}

}  // namespace ranktest::history
