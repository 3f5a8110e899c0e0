"""`jspgfn report posterior`: the HTML page of one samples file, its content against the code that computes
each number, its errors, and the page itself in headless Chromium (screenshot, console errors, images, width).

The browser checks need Debian's `chromium`: the `chromium` fixture installs it with apt-get when it is
missing (root), and skips those tests with a loud reason only where it cannot. The screenshot of the report
is written to the pytest temporary folder; its path is printed (pytest -s shows it).
"""

import collections
import json
import os
import re
import shutil
import subprocess
import warnings
from pathlib import Path

import numpy as np
import pytest

from jspgfn.cli import main as cli_main
from jspgfn.dataset import Dataset, load_dataset
from jspgfn.evaluate import evaluate
from jspgfn.posterior import Posterior
from jspgfn.report.posterior_report import build_report, graph_label, section_weights, write_report
from jspgfn.samples import load_samples

K = 200
WINDOW = (1366, 900)  # a laptop screen: the page must not scroll sideways at this width


# ----------------------------------------------------------------- data, runs, samples, reports


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    """A d=5 simulated dataset, a smoke JSP-GFN run, its samples with log P_T, B-GES*'s samples, and the
    reports of both (JSP-GFN's with --run)."""
    root = tmp_path_factory.mktemp("report_posterior")
    data, run = root / "d5", root / "run"
    generate = ["generate", "--graph", "er1", "--model", "linear", "--d", "5", "--n", "100", "--n-test", "100"]
    assert cli_main(generate + ["--obs-var", "0.01", "--seed", "0", "--out", str(data)]) == 0
    assert cli_main(["train", str(data), "--preset", "smoke", "--seed", "0", "--no-progress", "--out", str(run)]) == 0
    sample = ["sample", str(run), "--num", str(K), "--log-pt", "--beam-size", "4", "--mc-samples", "8"]
    assert cli_main(sample + ["--out", str(root / "jspgfn.npz")]) == 0
    assert cli_main(["baseline", "b-ges", str(data), "--seed", "0", "--out", str(root / "ges.npz")]) == 0
    report = ["report", "posterior", str(root / "jspgfn.npz"), str(data), "--run", str(run), "--top", "4"]
    assert cli_main(report + ["--out", str(root / "jspgfn.html")]) == 0
    assert cli_main(["report", "posterior", str(root / "ges.npz"), str(data), "--out", str(root / "ges.html")]) == 0
    return root


def _section(page, anchor):
    match = re.search(rf'<section id="{anchor}">(.*?)</section>', page, re.S)
    assert match, f"no section {anchor}"
    return match.group(1)


def _images(page):
    return re.findall(r'<img src="([^"]*)"', page)


def test_report_holds_every_section_with_its_images(files):
    page = (files / "jspgfn.html").read_text(encoding="utf-8")
    names = load_dataset(files / "d5").names
    assert f"5 (d): {', '.join(names)}" in _section(page, "summary")
    weights = _section(page, "weights")  # the most probable edges, by their variables' names
    assert re.search(rf"<td>({'|'.join(names)}) → ({'|'.join(names)})</td>", weights)
    for anchor in ("edge-marginals", "top-graphs", "weights", "log-pt", "training"):
        assert len(_images(_section(page, anchor))) == 1, anchor
    assert len(_images(page)) == 5
    assert all(src.startswith("data:image/png;base64,") for src in _images(page))
    assert "<script" not in page and "http://" not in page and "https://" not in page  # self-contained
    assert "true graph (simulated)" in page and "reference graph" not in page
    assert "RANSAC slope" in _section(page, "log-pt")
    assert "3 dispatches up to iteration 60 (finished)" in _section(page, "training")  # smoke: 60 = 3 x 20


def test_numbers_are_those_of_evaluate_and_top_graphs(files):
    page = (files / "jspgfn.html").read_text(encoding="utf-8")
    samples, dataset = load_samples(files / "jspgfn.npz"), load_dataset(files / "d5")
    metrics = evaluate(samples, dataset)
    shown = re.search(r'<td>E-SHD</td><td class="number">([^<]+)</td>', page).group(1)
    assert float(shown) == pytest.approx(metrics["expected_shd"], rel=1e-3)
    auroc = re.search(r'<td>AUROC</td><td class="number">([^<]+)</td>', page).group(1)
    assert float(auroc) == pytest.approx(metrics["auroc"], rel=1e-3)
    assert f"{metrics['log_pt_slope']:.4g}" in _section(page, "log-pt")

    rows = re.findall(
        r'<tr><td class="number">(\d+)</td><td class="number">([0-9.]+)</td>'
        r'<td class="number">(\d+)</td><td>([^<]*)</td>',
        _section(page, "top-graphs"),
    )
    top = Posterior.load(files / "jspgfn.npz").top_graphs(4)
    assert [int(r[0]) for r in rows] == [1, 2, 3, 4]
    probabilities = np.array([float(r[1]) for r in rows])
    np.testing.assert_allclose(probabilities, top["probability"].to_numpy(), atol=5e-5)
    assert probabilities.sum() <= 1.0 and np.all(np.diff(probabilities) <= 0)
    # the most probable graph and its frequency, counted here from the raw graphs
    counts = collections.Counter(g.tobytes() for g in samples.graphs)
    best, count = counts.most_common(1)[0]
    assert int(rows[0][2]) == count and probabilities[0] == pytest.approx(count / K, abs=5e-5)
    edges = [
        f"{dataset.names[i]} → {dataset.names[j]}"
        for i, j in zip(*np.nonzero(np.frombuffer(best, np.uint8).reshape(5, 5)))
    ]
    assert rows[0][3] == (", ".join(edges) or "(no edge)")


def test_baseline_report_says_why_log_pt_and_training_are_absent(files):
    page = (files / "ges.html").read_text(encoding="utf-8")
    for anchor, why in (("log-pt", "carry no estimate of log P_T"), ("training", "No run folder was given")):
        section = _section(page, anchor)
        assert why in section and not _images(section), anchor
    assert len(_images(page)) == 3  # heatmap, top graphs, weights
    metrics = evaluate(load_samples(files / "ges.npz"), load_dataset(files / "d5"))
    shown = re.search(r'<td>E-SHD</td><td class="number">([^<]+)</td>', page).group(1)
    assert float(shown) == pytest.approx(metrics["expected_shd"], rel=1e-3)


def test_graph_label_names_a_reference_graph_as_such(files, tmp_path):
    graph = np.zeros((2, 2), np.uint8)
    base = {"train": np.zeros((3, 2)), "names": ("a", "b"), "graph": graph}
    assert graph_label(Dataset(**base, meta={"graph_is_ground_truth": False})) == "reference graph"
    assert graph_label(Dataset(**base, meta={"generator": "jspgfn.generate"})) == "true graph (simulated)"
    assert graph_label(Dataset(**base)) == "graph.csv (given with the data)"
    assert graph_label(Dataset(train=np.zeros((3, 2)), names=("a", "b"))) is None
    # the Sachs datasets' meta.json: the page says reference graph, never true graph
    sachs_like = tmp_path / "ref"
    shutil.copytree(files / "d5", sachs_like)
    meta = json.loads((sachs_like / "meta.json").read_text())
    meta.update(graph_is_ground_truth=False, graph="REFERENCE, not a ground truth: a test note")
    (sachs_like / "meta.json").write_text(json.dumps(meta))
    page = build_report(Posterior.load(files / "ges.npz"), load_dataset(sachs_like))
    assert "Against the reference graph" in page and "a test note" in page and "true graph" not in page


def test_weights_section_without_a_weight_per_edge():
    """Non-linear models (theta [K, P]): a sentence, no image; a linear model without edges: a sentence too."""
    graphs = np.zeros((3, 2, 2), np.uint8)
    graphs[0, 0, 1] = 1
    mlp = Posterior(graphs=graphs, theta=np.zeros((3, 7)), metadata={"model": "mlp-gauss"})
    section = section_weights(mlp)
    assert "model &#x27;mlp-gauss&#x27; has no single weight per edge" in section and "<img" not in section
    empty = Posterior(graphs=np.zeros((3, 2, 2), np.uint8), theta=np.zeros((3, 2, 2)), metadata={})
    assert "No sample has an edge" in section_weights(empty) and "<img" not in section_weights(empty)
    linear = Posterior(graphs=graphs, theta=np.full((3, 2, 2), 0.5), metadata={})
    assert section_weights(linear).count("<img") == 1 and "<td>X1 → X2</td>" in section_weights(linear)


def test_report_without_a_graph_or_test_set(files, tmp_path):
    """A plain CSV (no graph.csv): no E-SHD, a sentence instead; the Python entry point takes a path."""
    out = write_report(tmp_path / "csv.html", files / "ges.npz", files / "d5" / "train.csv", top=2)
    page = out.read_text(encoding="utf-8")
    assert "The data has no graph.csv" in _section(page, "graph-metrics") and "E-SHD</td>" not in page
    assert len(re.findall(r'<tr><td class="number">\d+</td>', _section(page, "top-graphs"))) <= 2


def test_the_python_example_of_the_docs(files, tmp_path, monkeypatch):
    """docs/own-data.md's report example, run with this module's samples, data and run folder."""
    text = (Path(__file__).parents[1] / "docs" / "own-data.md").read_text()
    code = text.split("## A report of the posterior")[1].split("```python\n")[1].split("```")[0]
    monkeypatch.chdir(tmp_path)
    names = {"posterior": Posterior.load(files / "jspgfn.npz"), "table": files / "d5", "run": files / "run"}
    exec(compile(code, "docs/own-data.md", "exec"), names)
    page = (tmp_path / "report.html").read_text(encoding="utf-8")
    assert len(_images(page)) == 5 and "Training curve" in page


def test_bad_input_names_the_file_and_writes_nothing(files, tmp_path, capsys):
    out = tmp_path / "r.html"
    cases = [
        ([str(tmp_path / "missing.npz"), str(files / "d5")], "missing.npz"),
        ([str(files / "jspgfn.npz"), str(tmp_path / "nodata")], "nodata"),
        ([str(files / "jspgfn.npz"), str(files / "d5"), "--run", str(tmp_path)], "metrics.jsonl"),
        ([str(files / "jspgfn.npz"), str(files / "d5"), "--top", "0"], "--top"),
    ]
    other = tmp_path / "other"
    cli_main(["generate", "--d", "5", "--n", "20", "--seed", "1", "--out", str(other)])
    cases.append(([str(files / "jspgfn.npz"), str(other)], "jspgfn.npz"))  # samples of other data
    for args, named in cases:
        assert cli_main(["report", "posterior", *args, "--out", str(out)]) == 2
        error = capsys.readouterr().err.strip().splitlines()[-1]
        assert error.startswith("jspgfn: error:") and named in error, error
        assert not out.exists()
    out.write_text("an earlier page")  # a failed run leaves an earlier file as it was (atomic write)
    assert cli_main(["report", "posterior", str(files / "jspgfn.npz"), str(other), "--out", str(out)]) == 2
    assert out.read_text() == "an earlier page"
    assert cli_main(["report", "posterior", str(files / "jspgfn.npz"), str(files / "d5"), "--out", str(tmp_path)]) == 2
    assert "is a folder" in capsys.readouterr().err


# ----------------------------------------------------------------- headless Chromium


def _install_chromium():
    """Install Debian's chromium with apt-get (root only); returns what went wrong, or None."""
    if not shutil.which("apt-get"):
        return "no apt-get (not a Debian-like system)"
    if os.geteuid() != 0:
        return "not root, so apt-get cannot install it (run: sudo apt-get install -y chromium)"
    env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
    install = ["apt-get", "install", "-y", "--no-install-recommends", "chromium"]
    for command in (install, ["apt-get", "update"], install):
        try:
            result = subprocess.run(command, env=env, capture_output=True, text=True, timeout=900)
        except subprocess.TimeoutExpired:
            return f"{' '.join(command)} did not finish in 15 minutes"
        if result.returncode == 0 and command == install:
            return None
    return f"apt-get install chromium failed: {(result.stderr or result.stdout).strip()[-300:]}"


@pytest.fixture(scope="module")
def chromium():
    """The path of a headless-capable Chromium: /usr/bin/chromium, installed on demand."""
    path = shutil.which("chromium") or ("/usr/bin/chromium" if os.path.exists("/usr/bin/chromium") else None)
    problem = None
    if path is None:
        problem = _install_chromium()
        path = shutil.which("chromium")
    if path is None:
        reason = (
            f"CHROMIUM IS MISSING AND COULD NOT BE INSTALLED ({problem or 'not on PATH after apt-get'}): "
            "the posterior report was NOT checked in a browser"
        )
        warnings.warn(reason, stacklevel=1)
        pytest.skip(reason)
    return path


def _run_chromium(chromium, page, tmp_path, *flags, height=WINDOW[1]):
    """Run headless Chromium on the file `page` with `flags` in a window WINDOW[0] wide and `height` high;
    returns (stdout, stderr)."""
    profile = tmp_path / f"profile-{len(list(tmp_path.glob('profile-*')))}"
    command = [
        chromium,
        "--headless=new",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-dev-shm-usage",
        "--no-first-run",
        f"--user-data-dir={profile}",
        f"--window-size={WINDOW[0]},{height}",
        *flags,
        page.resolve().as_uri(),
    ]
    result = subprocess.run(command, capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr[-2000:]
    return result.stdout, result.stderr


# Put first in <head> of a copy of the page: records uncaught errors, failed resources, console.error and
# unhandled rejections, then at load every image's state and the page's width, as JSON in a hidden <pre>.
PROBE = """<script>
window.__problems = [];
window.addEventListener("error", function (e) {
  var t = e.target;
  if (t && t !== window && t.tagName) { window.__problems.push("failed to load: " + t.tagName); }
  else { window.__problems.push("uncaught: " + e.message); }
}, true);
window.addEventListener("unhandledrejection", function (e) { window.__problems.push("rejection: " + e.reason); });
(function () {
  var error = console.error;
  console.error = function () {
    window.__problems.push("console.error: " + Array.prototype.join.call(arguments, " "));
    return error.apply(console, arguments);
  };
})();
window.addEventListener("load", function () {
  var images = Array.prototype.map.call(document.images, function (i) {
    return {alt: i.alt, complete: i.complete, width: i.naturalWidth, height: i.naturalHeight,
            shown: i.getBoundingClientRect().width};
  });
  var root = document.documentElement;
  var out = {problems: window.__problems, images: images, scrollWidth: root.scrollWidth,
             scrollHeight: root.scrollHeight, innerWidth: window.innerWidth};
  var pre = document.createElement("pre");
  pre.id = "__probe"; pre.style.display = "none"; pre.textContent = JSON.stringify(out);
  document.body.appendChild(pre);
});
</script>"""


def _probe(chromium, page, tmp_path):
    """What a browser saw of `page`: {problems, images [{alt, complete, width, height, shown}], scrollWidth,
    scrollHeight, innerWidth} (the page is copied with PROBE added, then loaded in headless Chromium)."""
    text = page.read_text(encoding="utf-8")
    assert "<head>" in text
    probed = tmp_path / f"probed-{page.name}"
    probed.write_text(text.replace("<head>", "<head>" + PROBE, 1), encoding="utf-8")
    dom, _ = _run_chromium(chromium, probed, tmp_path, "--virtual-time-budget=10000", "--dump-dom")
    match = re.search(r'<pre id="__probe"[^>]*>(.*?)</pre>', dom, re.S)
    assert match, f"the probe did not report (no load event?): {dom[-500:]}"
    import html

    return json.loads(html.unescape(match.group(1)))


def _console_lines(stderr):
    """The console messages Chromium logs with --enable-logging=stderr --v=0."""
    return [line for line in stderr.splitlines() if ":CONSOLE" in line]


@pytest.mark.parametrize("name", ["jspgfn.html", "ges.html"])
def test_report_in_headless_chromium(files, chromium, tmp_path, name):
    page = files / name
    seen = _probe(chromium, page, tmp_path)
    assert seen["problems"] == []
    assert len(seen["images"]) == len(_images(page.read_text(encoding="utf-8"))) >= 3
    for image in seen["images"]:
        assert image["complete"] and image["width"] > 0 and image["height"] > 0, image
        assert 0 < image["shown"] <= WINDOW[0], image
    assert seen["innerWidth"] == WINDOW[0]
    assert seen["scrollWidth"] <= seen["innerWidth"], "the page scrolls sideways on a laptop screen"
    # the unmodified page: a screenshot of all of it (a window as high as the page), no console message
    screenshot = tmp_path / f"{page.stem}.png"
    flags = ("--enable-logging=stderr", "--v=0", f"--screenshot={screenshot}")
    _, stderr = _run_chromium(chromium, page, tmp_path, *flags, height=min(seen["scrollHeight"] + 20, 16000))
    assert _console_lines(stderr) == []
    assert screenshot.stat().st_size > 10_000
    print(f"\nscreenshot of {page}: {screenshot}")


def test_chromium_checks_catch_a_broken_page(files, chromium, tmp_path):
    """The checks above can fail: a corrupt image and a throwing script are both reported."""
    text = (files / "ges.html").read_text(encoding="utf-8")
    first = _images(text)[0]
    broken = text.replace(first, "data:image/png;base64,bm90IGEgcG5n", 1)
    broken = broken.replace(
        "</body>", '<script>throw new Error("deliberate")</script>\n<div style="width:3000px">wide</div></body>'
    )
    page = tmp_path / "broken.html"
    page.write_text(broken, encoding="utf-8")
    seen = _probe(chromium, page, tmp_path)
    assert any("deliberate" in p for p in seen["problems"]) and any(
        "failed to load: IMG" in p for p in seen["problems"]
    )
    assert sum(image["width"] == 0 for image in seen["images"]) == 1
    assert seen["scrollWidth"] > seen["innerWidth"]
    _, stderr = _run_chromium(
        chromium, page, tmp_path, "--enable-logging=stderr", "--v=0", "--virtual-time-budget=5000"
    )
    assert any("deliberate" in line for line in _console_lines(stderr)), stderr[-2000:]
