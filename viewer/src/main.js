// The page `arca view` serves: h5web's app over the server's h5grove API.
// The server's address carries `token` (every API request must send it
// back) and `file` (the name shown in the app).
import { createElement as h, StrictMode } from 'react';
import { createRoot } from 'react-dom/client';
import { App, H5GroveProvider, createBasicFetcher } from '@h5web/app';
import '@h5web/app/styles.css';
import './main.css';

const query = new URLSearchParams(window.location.search);
const token = query.get('token') ?? '';
const file = query.get('file') ?? 'file';
// An absolute address: h5web builds download links from it with `new URL`.
const api = new URL('api', window.location.href).href;

// Every request carries the token as a query parameter.
const basic = createBasicFetcher();
const fetcher = (url, params, opts) => basic(url, { ...params, token }, opts);

// Downloads are plain links, so they carry the token too.
function getExportURL(format, dataset, selection) {
  const params = new URLSearchParams({ file, path: dataset.path, format, token });
  if (selection) {
    params.set('selection', selection);
  }
  return new URL(`${api}/data?${params}`);
}

document.title = `${file} - arca view`;
createRoot(document.getElementById('root')).render(
  h(
    StrictMode,
    null,
    h(
      'div',
      { className: 'viewer' },
      h(H5GroveProvider, { url: api, filepath: file, fetcher, getExportURL }, h(App)),
    ),
  ),
);
