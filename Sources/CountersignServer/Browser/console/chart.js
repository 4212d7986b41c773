// Approvals per hour, stacked by outcome, as an SVG bar chart with a legend and, for screen readers,
// a table of the same numbers.

const svgNS = 'http://www.w3.org/2000/svg';
/** Outcomes with a colour of their own (console.css, `.bar-<outcome>`), in stacking order. */
const named = ['approved', 'denied', 'expired', 'cancelled', 'failed', 'pending'];
const size = { bar: 22, gap: 8, height: 180, left: 40, top: 12, bottom: 30, right: 12 };

function svg(tag, attributes = {}, ...children) {
  const element = document.createElementNS(svgNS, tag);
  for (const [key, value] of Object.entries(attributes)) element.setAttribute(key, String(value));
  element.append(...children);
  return element;
}

function html(tag, attributes = {}, ...children) {
  const element = document.createElement(tag);
  for (const [key, value] of Object.entries(attributes)) element.setAttribute(key, String(value));
  element.append(...children);
  return element;
}

/** The class that colours `outcome`: its own, or one of four for outcomes this page does not know. */
function colour(outcome, outcomes) {
  return named.includes(outcome) ? `bar-${outcome}` : `bar-extra-${outcomes.indexOf(outcome) % 4}`;
}

function hourLabel(iso) {
  const date = new Date(iso);
  return Number.isNaN(date.getTime()) ? iso : `${String(date.getHours()).padStart(2, '0')}:00`;
}

/** A round top for the axis: 1, 2 or 5 times a power of ten. */
function roundUp(value) {
  const power = 10 ** Math.floor(Math.log10(Math.max(1, value)));
  return [1, 2, 5, 10].map((step) => step * power).find((top) => top >= value);
}

/** The chart of `hours` (`[{start, outcomes: {approved: n, …}}]`, oldest first), as a `<figure>`. */
export function approvalChart(hours) {
  const seen = new Set(hours.flatMap((hour) => Object.keys(hour.outcomes ?? {})));
  const outcomes = [...named.filter((name) => seen.has(name)), ...[...seen].filter((name) => !named.includes(name)).sort()];
  const totals = Object.fromEntries(outcomes.map((outcome) => [outcome, hours.reduce((sum, hour) => sum + (hour.outcomes?.[outcome] ?? 0), 0)]));
  const top = roundUp(Math.max(1, ...hours.map((hour) => outcomes.reduce((sum, outcome) => sum + (hour.outcomes?.[outcome] ?? 0), 0))));
  const plotWidth = Math.max(1, hours.length) * (size.bar + size.gap);
  const width = size.left + plotWidth + size.right;
  const height = size.top + size.height + size.bottom;
  const y = (value) => size.top + size.height - (value / top) * size.height;

  const summary = outcomes.length ? outcomes.map((outcome) => `${totals[outcome]} ${outcome}`).join(', ') : 'none';
  const label = `Approvals per hour by outcome over the last ${hours.length} hours: ${summary}.`;
  const chart = svg('svg', { role: 'img', 'aria-label': label, class: 'chart', viewBox: `0 0 ${width} ${height}`, width, height },
    svg('title', {}, label));

  for (const value of [0, top / 2, top]) {
    chart.append(
      svg('line', { x1: size.left, x2: width - size.right, y1: y(value), y2: y(value), class: 'grid' }),
      svg('text', { x: size.left - 6, y: y(value) + 4, 'text-anchor': 'end', class: 'axis' }, String(value)));
  }
  hours.forEach((hour, index) => {
    const x = size.left + index * (size.bar + size.gap) + size.gap / 2;
    let base = 0;
    for (const outcome of outcomes) {
      const count = hour.outcomes?.[outcome] ?? 0;
      if (!count) continue;
      chart.append(svg('rect', { x, y: y(base + count), width: size.bar, height: y(base) - y(base + count), class: `bar ${colour(outcome, outcomes)}` },
        svg('title', {}, `${hourLabel(hour.start)}: ${count} ${outcome}`)));
      base += count;
    }
    // Every third hour is named, enough to read the time without crowding.
    if (index % 3 === 0) {
      chart.append(svg('text', { x: x + size.bar / 2, y: height - 10, 'text-anchor': 'middle', class: 'axis' }, hourLabel(hour.start)));
    }
  });

  const legend = html('ul', { class: 'legend' }, ...outcomes.map((outcome) => html('li', {},
    svg('svg', { width: 14, height: 14, 'aria-hidden': 'true' }, svg('rect', { width: 14, height: 14, rx: 2, class: `bar ${colour(outcome, outcomes)}` })),
    ` ${outcome}: ${totals[outcome]}`)));

  const table = html('table', { class: 'visually-hidden' },
    html('caption', {}, 'Approvals per hour by outcome'),
    html('thead', {}, html('tr', {}, html('th', { scope: 'col' }, 'Hour'), ...outcomes.map((outcome) => html('th', { scope: 'col' }, outcome)))),
    html('tbody', {}, ...hours.map((hour) => html('tr', {},
      html('th', { scope: 'row' }, hourLabel(hour.start)),
      ...outcomes.map((outcome) => html('td', {}, String(hour.outcomes?.[outcome] ?? 0)))))));

  const figure = html('figure', { class: 'chart-figure' }, chart, legend, table);
  if (!outcomes.length) figure.append(html('p', { class: 'muted' }, 'No approvals were decided in this time.'));
  return figure;
}
