// Evaluated in a run's HTML report by inspect_page.py: opens each test's
// details (a failure's are open already) as a person clicks its row and returns its "History" strip (the
// verdicts before this run, then this run's), for history_page_test.cpp.
(() => {
  const facts = {};
  const rowOf = (index) => document.querySelector('#tests tbody tr.test[data-index="' + index + '"]');
  const indexes = [...document.querySelectorAll("#tests tbody tr.test")].map((tr) => tr.dataset.index);
  for (const index of indexes) {
    const isOpen = () => {
      const next = rowOf(index).nextElementSibling;
      return Boolean(next && next.classList.contains("details-row"));
    };
    const wasOpen = isOpen();
    if (!wasOpen) rowOf(index).click();  // the table is drawn again, the row open
    const row = rowOf(index);
    const strip = row.nextElementSibling && row.nextElementSibling.querySelector(".history");
    facts[row.querySelector("td.id").textContent] = strip ? {
      before: strip.querySelectorAll(".cell:not(.now)").length,
      failedBefore: strip.querySelectorAll(".cell.o-crashed:not(.now), .cell.o-failed:not(.now)").length,
      now: strip.querySelectorAll(".cell.now").length,
      text: strip.textContent,
    } : null;
    if (!wasOpen) rowOf(index).click();
  }
  return facts;
})()
