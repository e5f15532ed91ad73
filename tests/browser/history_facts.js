// Evaluated in the loaded history page by inspect_page.py: what a person
// sees of each section, for history_page_test.cpp to check.
(() => {
  const rowsOf = (section) =>
    [...document.querySelectorAll("#" + section + " tbody tr")].map((tr) => ({
      id: tr.dataset.test,
      cells: tr.querySelectorAll(".cell").length,
      points: tr.querySelectorAll(".cell.point").length,
      failing: tr.querySelectorAll(".cell.o-fail").length,
      dots: tr.querySelectorAll("svg.spark circle").length,
      drawn: (() => {
        const box = tr.querySelector("svg.spark").getBoundingClientRect();
        return box.width > 0 && box.height > 0;
      })(),
    }));
  return {
    title: document.title,
    about: document.getElementById("about").textContent,
    sections: [...document.querySelectorAll("#sections > section")].map((s) => s.id),
    all: rowsOf("all"),
    slowest: rowsOf("slowest").map((r) => r.id),
    streaks: rowsOf("streaks").map((r) => r.id),
    scripts: document.scripts.length,
  };
})()
