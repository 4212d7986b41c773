// A journey drawn as SVG: one box per step, in layers by distance from the start (breadth first), and an
// arrow for each way out of a step: next, failure, cancel and named branches.

const svgNS = 'http://www.w3.org/2000/svg';
const size = { width: 184, height: 46, gapX: 32, gapY: 70, margin: 24, loop: 80 };
const kinds = ['next', 'failure', 'cancel', 'branch'];
/** Each drawing's markers get their own ids: a page may hold several drawings. */
let drawings = 0;

function svg(tag, attributes = {}, ...children) {
  const element = document.createElementNS(svgNS, tag);
  for (const [key, value] of Object.entries(attributes)) element.setAttribute(key, value);
  element.append(...children);
  return element;
}

/**
 * The ways out of each step as `{from, to, kind, label}`; ways from one step to the same target are one
 * arrow, labelled with all their names.
 */
export function transitions(steps) {
  const arrows = new Map();
  for (const step of steps) {
    const ways = [['next', 'next', step.next], ['failure', 'failure', step.failure], ['cancel', 'cancel', step.cancel],
      ...Object.entries(step.branches ?? {}).map(([name, target]) => ['branch', name, target])];
    for (const [kind, name, to] of ways) {
      if (!to) continue;
      const key = `${step.id}\n${to}`;
      const arrow = arrows.get(key);
      if (arrow) arrow.names.push(name);
      else arrows.set(key, { from: step.id, to, kind, names: [name] });
    }
  }
  // A lone `next` needs no label: it is the plain way on.
  return [...arrows.values()].map(({ names, ...arrow }) => ({ ...arrow, label: names.join(', ') === 'next' ? '' : names.join(', ') }));
}

/** Each step's layer: its distance from `start`; steps it cannot reach go below the rest. */
function layers(start, ids, arrows) {
  const depth = new Map([[start, 0]]);
  const queue = [start];
  while (queue.length) {
    const id = queue.shift();
    for (const arrow of arrows) {
      if (arrow.from === id && !depth.has(arrow.to)) {
        depth.set(arrow.to, depth.get(id) + 1);
        queue.push(arrow.to);
      }
    }
  }
  const deepest = Math.max(0, ...depth.values());
  for (const id of ids) if (!depth.has(id)) depth.set(id, deepest + 1);
  return depth;
}

function shorten(text, length = 24) {
  return text.length > length ? `${text.slice(0, length - 1)}…` : text;
}

/** The diagram of `journey` (`{id, name, start, steps}`), an `<svg data-diagram>`. */
export function journeyDiagram(journey) {
  const drawing = ++drawings;
  const steps = journey.steps ?? [];
  const arrows = transitions(steps);
  const known = new Set(steps.map((step) => step.id));
  // A target that names no step (a typo the lint reports) is drawn too, dashed.
  const missing = [...new Set(arrows.map((arrow) => arrow.to).filter((to) => !known.has(to)))];
  const ids = [...steps.map((step) => step.id), ...missing];
  const depth = layers(journey.start, ids, arrows);
  const rows = [];
  for (const id of ids) (rows[depth.get(id)] ??= []).push(id);
  const widest = Math.max(1, ...rows.map((row) => row?.length ?? 0));
  const width = size.margin * 2 + widest * size.width + (widest - 1) * size.gapX + size.loop;
  const height = size.margin * 2 + rows.length * size.height + (rows.length - 1) * size.gapY;

  // Where each box is: rows centred over the widest.
  const place = new Map();
  rows.forEach((row = [], layer) => {
    const rowWidth = row.length * size.width + (row.length - 1) * size.gapX;
    const left = size.margin + ((widest * size.width + (widest - 1) * size.gapX) - rowWidth) / 2;
    row.forEach((id, index) => place.set(id, {
      x: left + index * (size.width + size.gapX), y: size.margin + layer * (size.height + size.gapY), layer,
    }));
  });

  const types = new Map(steps.map((step) => [step.id, step.type]));
  const label = `Diagram of the journey ${journey.name ?? journey.id}: ${steps.length} steps, starting at ${journey.start}.`;
  const root = svg('svg', {
    'data-diagram': '', role: 'img', 'aria-label': label, class: 'diagram',
    viewBox: `0 0 ${width} ${height}`, width: String(width), height: String(height),
  }, svg('title', {}, label));
  const markers = kinds.map((kind) => svg('marker', {
    id: `diagram-${drawing}-${kind}`, viewBox: '0 0 10 10', refX: '9', refY: '5', markerWidth: '7', markerHeight: '7', orient: 'auto-start-reverse',
  }, svg('path', { d: 'M 0 0 L 10 5 L 0 10 z', class: `arrow-head arrow-${kind}` })));
  root.append(svg('defs', {}, ...markers));

  // Arrows first, so the boxes sit on top of their ends.
  const leaving = new Map();
  for (const arrow of arrows) {
    const from = place.get(arrow.from);
    const to = place.get(arrow.to);
    if (!from || !to) continue;
    let path;
    let middle;
    if (to.layer > from.layer) {
      // Down: from the bottom of the source, spread over its width, to the top of the target.
      const out = arrows.filter((other) => other.from === arrow.from && place.get(other.to)?.layer > from.layer);
      const index = leaving.get(arrow.from) ?? 0;
      leaving.set(arrow.from, index + 1);
      const x1 = from.x + (size.width * (index + 1)) / (out.length + 1);
      const y1 = from.y + size.height;
      const x2 = to.x + size.width / 2;
      const y2 = to.y;
      const bend = (y2 - y1) / 2;
      path = `M ${x1} ${y1} C ${x1} ${y1 + bend}, ${x2} ${y2 - bend}, ${x2} ${y2}`;
      middle = { x: (x1 + x2) / 2, y: (y1 + y2) / 2 };
    } else {
      // Back up or across (a retry, a loop): around the right-hand side.
      const x1 = from.x + size.width;
      const y1 = from.y + size.height / 2;
      const x2 = to.x + size.width;
      const y2 = to.y + size.height / 2 + (arrow.from === arrow.to ? 12 : 0);
      const reach = Math.max(x1, x2) + size.loop * 0.75;
      path = `M ${x1} ${y1} C ${reach} ${y1}, ${reach} ${y2}, ${x2} ${y2}`;
      middle = { x: reach - size.loop * 0.15, y: (y1 + y2) / 2 };
    }
    const group = svg('g', { class: `edge edge-${arrow.kind}`, 'data-from': arrow.from, 'data-to': arrow.to },
      svg('path', { d: path, class: 'edge-line', 'marker-end': `url(#diagram-${drawing}-${arrow.kind})` }));
    if (arrow.label) {
      group.append(svg('text', { x: String(middle.x), y: String(middle.y), 'text-anchor': 'middle', class: 'edge-label' }, shorten(arrow.label, 28)));
    }
    root.append(group);
  }

  for (const id of ids) {
    const { x, y } = place.get(id);
    const type = types.get(id);
    const classes = ['step', type ? `step-${type}` : 'step-missing', id === journey.start ? 'step-start' : ''].join(' ').trim();
    // Only real steps carry `data-step`: one per step of the journey.
    root.append(svg('g', { [type ? 'data-step' : 'data-missing-step']: id, class: classes },
      svg('title', {}, type ? `${id} (${type})` : `${id}: no such step`),
      svg('rect', { x: String(x), y: String(y), width: String(size.width), height: String(size.height), rx: '6' }),
      svg('text', { x: String(x + size.width / 2), y: String(y + 19), 'text-anchor': 'middle', class: 'step-id' }, shorten(id)),
      svg('text', { x: String(x + size.width / 2), y: String(y + 36), 'text-anchor': 'middle', class: 'step-type' },
        shorten(type ?? 'no such step', 28))));
  }
  return root;
}
