// @ts-check
/** Links between the dashboard's views: the hash routes that take a URL parameter. */

/** The card view of an endpoint. @param {string} baseUrl */
export function cardHref(baseUrl) {
  return `#/card?url=${encodeURIComponent(baseUrl)}`;
}

/** The inspector, its URL field filled with `url` (an endpoint's base URL or a card URL). @param {string} url */
export function inspectHref(url) {
  return `#/inspect?url=${encodeURIComponent(url)}`;
}

/** The Sources view, scrolled to one source when `id` is given. @param {string} [id] */
export function sourcesHref(id) {
  return id === undefined ? '#/sources' : `#/sources?source=${encodeURIComponent(id)}`;
}

/** The Search view, its query box filled with `text` (and run) when one is given. @param {string} [text] */
export function searchHref(text) {
  return text === undefined || text === '' ? '#/search' : `#/search?q=${encodeURIComponent(text)}`;
}
