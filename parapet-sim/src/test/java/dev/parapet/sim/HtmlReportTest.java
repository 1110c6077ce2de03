package dev.parapet.sim;

import static org.assertj.core.api.Assertions.assertThat;

import dev.parapet.core.breaker.BreakerPolicy;
import dev.parapet.sim.replay.ReplayLogs;
import dev.parapet.sim.replay.ReplayOptions;
import dev.parapet.sim.replay.ReplayResult;
import java.io.ByteArrayInputStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import javax.xml.parsers.DocumentBuilder;
import javax.xml.parsers.DocumentBuilderFactory;
import org.junit.jupiter.api.Test;
import org.w3c.dom.Document;
import org.w3c.dom.Element;
import org.w3c.dom.NodeList;

class HtmlReportTest {
  private static final String SVG = "http://www.w3.org/2000/svg";
  private static final String XHTML = "http://www.w3.org/1999/xhtml";

  static Document parse(String xml) throws Exception {
    DocumentBuilderFactory f = DocumentBuilderFactory.newInstance();
    f.setNamespaceAware(true);
    f.setFeature("http://apache.org/xml/features/nonvalidating/load-external-dtd", false);
    DocumentBuilder b = f.newDocumentBuilder();
    return b.parse(new ByteArrayInputStream(xml.getBytes(StandardCharsets.UTF_8)));
  }

  private static List<Element> elements(Element root, String ns, String name) {
    NodeList nl = root.getElementsByTagNameNS(ns, name);
    List<Element> out = new ArrayList<>();
    for (int i = 0; i < nl.getLength(); i++) {
      out.add((Element) nl.item(i));
    }
    return out;
  }

  private static List<RunResult> retryStorm(long seed) {
    return Scenarios.runAll(Scenarios.retryStorm().scaled(0.05), seed);
  }

  @Test
  void scenarioPageIsWellFormedXhtmlWithAPathPerSeriesInEveryVariantsPanel() throws Exception {
    List<RunResult> runs = retryStorm(1);
    Document doc = parse(HtmlReport.scenario(runs));
    Element html = doc.getDocumentElement();
    assertThat(html.getNamespaceURI()).isEqualTo(XHTML);
    assertThat(html.getLocalName()).isEqualTo("html");
    // The summary table: a header row naming both variants, then the rows of the text summary.
    List<Element> rows = elements(html, XHTML, "tr");
    assertThat(rows).hasSize(Report.summaryRows(runs).size());
    assertThat(rows.get(0).getTextContent()).contains("naive retry", "budget+breaker");
    assertThat(html.getTextContent()).contains("amplification (fault)", "p99 latency (fault)");

    List<Element> svgs = elements(html, SVG, "svg");
    assertThat(svgs).hasSize(5);
    for (Element svg : svgs) {
      List<Element> panels = new ArrayList<>();
      for (Element g : elements(svg, SVG, "g")) {
        if ("panel".equals(g.getAttribute("class"))) {
          panels.add(g);
        }
      }
      // Protected and unprotected side by side, the same series in each.
      assertThat(panels)
          .extracting(p -> p.getAttribute("data-title"))
          .containsExactly("naive retry", "budget+breaker");
      List<String> first = seriesNames(panels.get(0));
      assertThat(first).isNotEmpty();
      assertThat(seriesNames(panels.get(1))).isEqualTo(first);
      // Phases as bands: healthy, capacity-7k, down, recovery.
      assertThat(elements(panels.get(0), SVG, "rect"))
          .filteredOn(r -> "band".equals(r.getAttribute("class")))
          .hasSize(4);
    }
    assertThat(seriesNames(firstPanel(svgs.get(0))))
        .containsExactly(
            "offered",
            "origin attempts",
            "retries",
            "good answers",
            "fast fails",
            "origin goodput");
  }

  @Test
  void seriesPathsFollowTheData() throws Exception {
    List<RunResult> runs = retryStorm(1);
    Element svg = parse(HtmlReport.charts(runs).get(0).render()).getDocumentElement();
    assertThat(svg.getNamespaceURI()).isEqualTo(SVG);
    for (Element path : elements(svg, SVG, "path")) {
      // One point per simulated second (no gaps in these series): a move, then 129 lines.
      String d = path.getAttribute("d");
      assertThat(d).startsWith("M");
      assertThat(d.split("L")).hasSize(130);
    }
    // Unprotected: attempts above offered in the 30 % timeout phase (naive retry), the protected
    // panel's attempts fall to ~0 while the origin is down.
    String naiveAttempts = pathOf(svg, 0, "origin attempts");
    String protectedAttempts = pathOf(svg, 1, "origin attempts");
    assertThat(naiveAttempts).isNotEqualTo(protectedAttempts);
  }

  @Test
  void sameSeedGivesTheSameBytesAndAnotherSeedDoesNot() {
    assertThat(HtmlReport.scenario(retryStorm(5))).isEqualTo(HtmlReport.scenario(retryStorm(5)));
    assertThat(HtmlReport.scenario(retryStorm(5))).isNotEqualTo(HtmlReport.scenario(retryStorm(6)));
  }

  @Test
  void replayPageShowsWhenTheBreakerWouldOpenAndTheRejectedShare() throws Exception {
    ReplayOptions o = ReplayOptions.defaults();
    ReplayResult result = ReplayLogs.replay(ReplayLogs.csvLog(), o, BreakerPolicy.defaults());
    String page = HtmlReport.replay(result, o);
    assertThat(page).isEqualTo(HtmlReport.replay(result, o));
    Element html = parse(page).getDocumentElement();
    List<Element> tables = elements(html, XHTML, "table");
    assertThat(elements(tables.get(1), XHTML, "tr")).hasSize(3); // header, /api, /static
    List<Element> svgs = elements(html, SVG, "svg");
    assertThat(svgs).hasSize(4); // counts and rejected share, per route
    Element api = svgs.get(0);
    assertThat(elements(api, SVG, "title").get(0).getTextContent()).isEqualTo("route /api");
    assertThat(seriesNames(firstPanel(api)))
        .containsExactly("requests", "failures", "would reject");
    // The breaker opened on /api (35 s in): an "open" band starts there; /static never opened.
    List<Element> apiBands =
        elements(api, SVG, "rect").stream()
            .filter(r -> "band".equals(r.getAttribute("class")))
            .toList();
    assertThat(apiBands).isNotEmpty();
    assertThat(apiBands.get(0).getAttribute("fill")).isEqualTo("#f8c4bd");
    // the share chart sets the log's failed share beside the share it would have rejected
    assertThat(seriesNames(firstPanel(svgs.get(1)))).containsExactly("failed (%)", "would reject");
    Element stat = svgs.get(2);
    assertThat(elements(stat, SVG, "title").get(0).getTextContent()).isEqualTo("route /static");
    assertThat(elements(stat, SVG, "rect")).noneMatch(r -> "band".equals(r.getAttribute("class")));
    assertThat(result.binNanos()).isEqualTo(1_000_000_000L);
    assertThat(result.bins()).isEqualTo(80);
    long[] rejects = result.series(result.policies().get(0).route("/api").rejects);
    assertThat(rejects[20]).isZero();
    assertThat(rejects[40]).isEqualTo(50);
  }

  @Test
  void replayPageHasAPanelPerPolicy() throws Exception {
    ReplayOptions o = ReplayOptions.defaults();
    BreakerPolicy strict = BreakerPolicy.defaults().toBuilder().failureRate(0.2).build();
    ReplayResult result =
        ReplayLogs.replay(ReplayLogs.csvLog(), o, BreakerPolicy.defaults(), strict);
    Element html = parse(HtmlReport.replay(result, o)).getDocumentElement();
    Element api = elements(html, SVG, "svg").get(0);
    assertThat(
            elements(api, SVG, "g").stream()
                .filter(g -> "panel".equals(g.getAttribute("class")))
                .count())
        .isEqualTo(2);
    // The side-by-side table: a column per policy.
    Element first = elements(html, XHTML, "table").get(0);
    assertThat(elements(elements(first, XHTML, "tr").get(0), XHTML, "th")).hasSize(3);
  }

  private static Element firstPanel(Element svg) {
    return elements(svg, SVG, "g").stream()
        .filter(g -> "panel".equals(g.getAttribute("class")))
        .findFirst()
        .orElseThrow();
  }

  private static List<String> seriesNames(Element panel) {
    return elements(panel, SVG, "path").stream()
        .filter(p -> "series".equals(p.getAttribute("class")))
        .map(p -> p.getAttribute("data-series"))
        .toList();
  }

  private static String pathOf(Element svg, int panel, String series) {
    List<Element> panels =
        elements(svg, SVG, "g").stream()
            .filter(g -> "panel".equals(g.getAttribute("class")))
            .toList();
    return elements(panels.get(panel), SVG, "path").stream()
        .filter(p -> series.equals(p.getAttribute("data-series")))
        .findFirst()
        .orElseThrow()
        .getAttribute("d");
  }
}
