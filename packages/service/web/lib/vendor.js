// @ts-check
/**
 * The vendor modules the service serves from node_modules (no build step, no CDN), re-exported
 * with their real types for `tsc --checkJs`. Nothing else imports `/vendor/*`.
 */
// @ts-expect-error -- served by src/http/static-files.ts from node_modules/preact
import * as preactModule from '/vendor/preact.mjs';
// @ts-expect-error -- preact/hooks, its bare 'preact' import rewritten to /vendor/preact.mjs
import * as hooksModule from '/vendor/preact-hooks.mjs';
// @ts-expect-error -- served from node_modules/htm
import htmModule from '/vendor/htm.mjs';

/** @type {typeof import('preact')} */
const preact = preactModule;
/** @type {typeof import('preact/hooks')} */
const hooks = hooksModule;
/** @type {typeof import('htm').default} */
const htm = htmModule;

export const { h, render, Fragment } = preact;
export const { useState, useEffect, useMemo, useRef, useCallback, useLayoutEffect, useId } = hooks;
/** Tagged templates → preact vnodes. */
export const html = htm.bind(h);
