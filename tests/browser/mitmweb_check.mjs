// Drives a running mitmweb in headless Debian Chromium and reports what a user sees of a gateway flow.
//
//   node tests/browser/mitmweb_check.mjs <mitmweb url with ?token=...> <path fragment of the flow> <out dir>
//
// Prints one JSON object (the texts found on the page) for tests/browser/test_mitmweb.py to assert on,
// and writes report.json (the same object), request.png (the Translation view), response.png (SSE events) and filtered.png (the flow
// list under the "dropped something" filter) into <out dir>. The browser is /usr/bin/chromium
// (or $CHROMIUM); playwright-core downloads nothing.

import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { chromium } from "playwright-core";

const [url, pathFragment, outDir] = process.argv.slice(2);
if (!url || !pathFragment || !outDir) {
  console.error("usage: mitmweb_check.mjs <url> <path fragment> <out dir>");
  process.exit(2);
}
const FILTER = process.env.GATEWAY_FILTER || "~comment dropped:";
mkdirSync(outDir, { recursive: true });

const browser = await chromium.launch({
  executablePath: process.env.CHROMIUM || "/usr/bin/chromium",
  headless: true,
  // without the background-networking flags Chromium keeps dialing Google on a closed network
  args: ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
    "--disable-background-networking", "--disable-component-update", "--disable-sync",
    "--disable-dev-shm-usage"],
});
const report = { url: url.replace(/token=[^&]*/, "token=***") };
try {
  const page = await browser.newPage({ viewport: { width: 1920, height: 1080 } });
  page.setDefaultTimeout(20000);
  await page.goto(url);

  const rows = page.locator(".flow-table tbody tr", { has: page.locator("td.col-path") });
  const row = rows.filter({ hasText: pathFragment }).first();
  await row.waitFor();
  report.rows = await rows.allInnerTexts();
  report.marker = (await row.locator(".marker").innerText()).trim();
  report.commentCell = (await row.locator("td.col-comment").innerText()).trim();

  // fit the Path, then the Comment column to their text, as a user would (double-click on a
  // header's resize handle): Path first, or the fitted Comment pushes the rest off screen
  for (const column of ["path", "comment"]) {
    await page.locator(`.flow-table th.col-${column} .col-resize-handle`).dblclick();
  }

  // select the flow: the detail pane opens on the Request tab, body rendered by the "auto" view
  await row.click();

  // and give the flow list the few pixels the whole comment needs (drag the splitter)
  const splitter = await page.locator(".splitter.splitter-x").boundingBox();
  if (splitter) {
    const [x, y] = [splitter.x + splitter.width / 2, splitter.y + splitter.height / 2];
    await page.mouse.move(x, y);
    await page.mouse.down();
    await page.mouse.move(x + 80, y, { steps: 8 });
    await page.mouse.up();
  }

  // the mark must be on screen, not only in the page: inside the visible part of the list
  const list = await page.locator(".flow-table").boundingBox();
  const mark = await row.locator(".marker").boundingBox();
  report.markerOnScreen = Boolean(list && mark && mark.width > 0 && mark.x >= list.x
    && mark.x + mark.width <= list.x + list.width);

  const detail = page.locator(".flow-detail");
  const view = detail.locator(".contentview");
  await view.locator(".controls h5").waitFor();
  await view.getByText("Responses ->").first().waitFor();
  report.requestView = {
    title: (await view.locator(".controls h5").innerText()).trim(),
    text: await view.innerText(),
  };
  await page.screenshot({ path: join(outDir, "request.png") });

  await detail.locator("nav a", { hasText: "Response" }).click();
  await view.getByText("what the upstream sent").first().waitFor();
  report.responseView = {
    title: (await view.locator(".controls h5").innerText()).trim(),
    text: await view.innerText(),
  };
  await page.screenshot({ path: join(outDir, "response.png") });

  await detail.locator("nav a", { hasText: "Comment" }).click();
  const commentTab = detail.locator("section").last();
  await commentTab.getByText("dropped:").first().waitFor();
  report.commentTab = await commentTab.innerText();

  // the filter the README documents, typed where a user types it (Flow List tab, "Search")
  await page.locator("header nav a", { hasText: "Flow List" }).click();
  const search = page.getByPlaceholder("Search");
  await search.fill(FILTER);
  await search.press("Enter");
  await page.waitForFunction(
    (n) => document.querySelectorAll(".flow-table tbody tr td.col-path").length < n,
    report.rows.length,
  ).catch(() => {});
  report.filter = FILTER;
  report.filteredRows = await rows.allInnerTexts();
  report.filterInvalid = await page.locator(".filter-input.has-error").count() > 0;
  await page.screenshot({ path: join(outDir, "filtered.png") });
} catch (error) {
  report.error = String(error && error.stack || error);
  report.pageText = await browser.contexts()[0]?.pages()[0]?.innerText("body").catch(() => "");
} finally {
  await browser.close();
}
writeFileSync(join(outDir, "report.json"), JSON.stringify(report, null, 2));
console.log(JSON.stringify(report));
process.exitCode = report.error ? 1 : 0; // not process.exit(): a big report on a pipe would be cut
