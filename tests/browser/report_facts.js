// Evaluated in the loaded HTML report by inspect_page.py: uses the page as a
// person would (filters, clicks a timeline bar, opens a test) and returns
// what it then shows, for html_report_test.cpp to check.
(() => {
  const rows = () => [...document.querySelectorAll("#tests tbody tr.test")];
  const idOf = tr => tr.querySelector("td.id").textContent;
  const visible = node => {
    const box = node.getBoundingClientRect();
    return box.width > 0 && box.height > 0;
  };
  const facts = {};
  facts.title = document.title;
  facts.counts = Object.fromEntries([...document.querySelectorAll("[data-count]")].map(
      c => [c.dataset.count, Number(c.querySelector("b").textContent)]));
  facts.rows = rows().map(tr => ({ id: idOf(tr), outcome: tr.dataset.outcome }));
  // Markup in names and output stays text: no element came from a test.
  facts.scripts = document.scripts.length;
  facts.images = document.images.length;
  const timeline = document.getElementById("timeline");
  facts.timelineOnScreen = timeline.getBoundingClientRect().top < window.innerHeight;
  facts.lanes = [...timeline.querySelectorAll(".lane")].map(lane => lane.dataset.lane);
  const bars = [...timeline.querySelectorAll(".bar")];
  facts.bars = bars.length;
  facts.visibleBars = bars.filter(visible).length;
  facts.barsPerLane = Object.fromEntries([...timeline.querySelectorAll(".lane")].map(
      lane => [lane.dataset.lane, lane.querySelectorAll(".bar").length]));

  // The rows a filter shows, as a person's typing or choosing would; the
  // filter is cleared again afterwards.
  const filtered = (id, value, event) => {
    const box = document.getElementById(id);
    box.value = value;
    box.dispatchEvent(new Event(event));
    const shown = rows().map(idOf);
    box.value = "";
    box.dispatchEvent(new Event(event));
    return shown;
  };
  facts.filteredRows = filtered("filter", "Collective.", "input");
  facts.crashedRows = filtered("outcome-filter", "crashed", "change");
  // Tests that ran in a network namespace of their own, by their placement cell.
  facts.isolatedRows = rows().filter(tr => tr.children[4].textContent.includes("isolated network"))
                             .map(idOf);
  const network = document.querySelector("[data-fact=network]");
  facts.networkFact = network ? network.textContent : null;

  // A bar of the failed multi-rank test, clicked: its row opens with the log
  // of every rank.
  const target = "collective_test::Collective.EveryRankLoadsItsShard";
  // What each colour means, and the target's bars: one per rank on the
  // slot lanes, in that rank's outcome, one per device.
  facts.legend = [...document.querySelectorAll("#legend [data-legend]")].map(b => b.dataset.legend);
  facts.targetRankBars = bars.filter(b => b.title.startsWith(target + "\n") && b.dataset.rank)
                             .map(b => ({ rank: Number(b.dataset.rank),
                                          outcome: [...b.classList].find(c => c.startsWith("o-")) }))
                             .sort((a, b) => a.rank - b.rank);
  // A rank's bar, clicked: the test opens at that rank's log.
  const rankBar = bars.find(b => b.title.startsWith(target + "\n") && b.dataset.rank === "1");
  if (rankBar) {
    rankBar.click();
    const open = rows().find(tr => idOf(tr) === target);
    const details = open && open.nextElementSibling;
    facts.rankBarOpenLogs = details ? [...details.querySelectorAll("details.log")]
                                          .filter(d => d.open).map(d => Number(d.dataset.rank))
                                    : null;
    open.click();  // closed again, for the click below
  }
  const bar = bars.find(b => b.title.startsWith(target + "\n") && !b.dataset.rank);
  facts.barOfTarget = Boolean(bar);
  if (bar) {
    bar.click();
    const open = rows().find(tr => idOf(tr) === target);
    facts.targetOpen = Boolean(open && open.classList.contains("open"));
    const details = open && open.nextElementSibling;
    if (details && details.classList.contains("details-row")) {
      facts.targetLogs = [...details.querySelectorAll("details.log")].map(d => ({
        rank: Number(d.dataset.rank), open: d.open,
        text: (d.querySelector("pre.log-text") || { textContent: "" }).textContent }));
      facts.targetText = details.textContent;
    }
  }
  window.scrollTo(0, 0);
  return facts;
})()
