// What fits: the weights' bytes in memory for each dtype a load may ask for (inspect's report: an estimate from
// the headers unless a runtime measured them), whether each fits in WebAssembly's 4 GiB and in the device's
// memory as far as the browser tells it, and the dtype the load will ask for.
import { formatBytes } from '../shared/panel.js';
import { $, show } from './dom.js';

const GiB = 2 ** 30;
/** The most a wasm32 instance can hold. */
const WASM_LIMIT = 4 * GiB;
/** What a load needs beside the weights: the staging block, the working memory, a KV cache. */
const OVERHEAD = 96 * 2 ** 20;

/**
 * The device's memory as the browser tells it, in GiB, or null: navigator.deviceMemory is rounded down to a power
 * of two and capped (at 8 by the spec, higher by some browsers), so it is a lower bound, never the size.
 */
const deviceGiB = () => (navigator.deviceMemory > 0 ? navigator.deviceMemory : null);

/** Fills the fits table and the dtype choice from inspect's `report`; shows the card. */
export function renderFits(report) {
  const m = report.memory;
  const rows = [['as stored', '', m.stored], ...Object.keys(m).filter((k) => k !== 'stored').map((k) => [k, k, m[k]])].filter((r) => r[2]);
  const dtype = $('dtype');
  const keep = dtype.value;
  dtype.replaceChildren(...rows.map(([label, value]) => new Option(label, value)));
  dtype.value = keep && rows.some((r) => r[1] === keep) ? keep : '';
  const device = deviceGiB();
  $('fits').tBodies[0].replaceChildren(...rows.map(([label, value, mem]) => {
    const need = mem.weightBytes + OVERHEAD;
    const [fits, why] = need > WASM_LIMIT ? ['no', 'no: over the 4 GiB of wasm memory']
      : device && need > device * GiB / 2 ? ['maybe', `maybe: over half of the ${device} GiB this browser reports (the device may have more)`] : ['yes', 'yes'];
    const tr = document.createElement('tr');
    tr.innerHTML = '<td></td><td></td><td></td>';
    tr.cells[0].textContent = label;
    tr.cells[1].textContent = formatBytes(mem.weightBytes);
    tr.cells[1].title = Object.entries(mem.weightTypes).map(([t, b]) => `${t}: ${formatBytes(b)}`).join(', ');
    tr.cells[2].textContent = why;
    tr.cells[2].className = fits;
    tr.dataset.dtype = value;
    return tr;
  }));
  $('fits').tHead.rows[0].cells[1].textContent = report.memoryExact ? 'weights' : 'weights (estimate)';
  $('fit-note').textContent = `A load needs the weights plus about ${formatBytes(OVERHEAD)} (the staging block, working memory, the KV cache)`
    + `${report.memoryExact ? '' : '; the weights\' bytes are estimated from the files\' headers (the loader pads each matrix a little)'}. `
    + `WebAssembly memory ends at 4 GiB. ${device ? `This browser says the device has at least ${device} GiB (navigator.deviceMemory rounds down and is capped).`
      : 'This browser does not say how much memory the device has.'}`;
  show($('fit-card'));
}
