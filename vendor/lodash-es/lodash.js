/**
 * lodash-es, as one module: every export of lodash-es 4.18.1, read from lodash's single CommonJS
 * file (the same release, the same code) instead of from 640 ES modules.
 *
 * Why: ADK JS imports `cloneDeep`, `isEmpty` and `isEqual` from lodash-es's index, which imports
 * every function from a file of its own. Every process that loads ADK (`serve`, the CLI's service
 * commands, most test processes) paid 0.2 s of CPU for it, and 0.65 s under the tests' loader
 * hooks; lodash's one file costs 0.02 s. The repository's root package.json points lodash-es here
 * (`overrides`); an installation of the published packages gets lodash-es itself. See
 * docs/dependencies.md.
 */
import { createRequire } from 'node:module';

const _ = createRequire(import.meta.url)('lodash');
const wrapper = _.prototype;

export default _;
export const {
  add, after, ary, assign, assignIn, assignInWith, assignWith, at,
  attempt, before, bind, bindAll, bindKey, camelCase, capitalize, castArray,
  ceil, chain, chunk, clamp, clone, cloneDeep, cloneDeepWith, cloneWith,
  compact, concat, cond, conforms, conformsTo, constant, countBy, create,
  curry, curryRight, debounce, deburr, defaultTo, defaults, defaultsDeep, defer,
  delay, difference, differenceBy, differenceWith, divide, drop, dropRight, dropRightWhile,
  dropWhile, each, eachRight, endsWith, entries, entriesIn, eq, escape,
  escapeRegExp, every, extend, extendWith, fill, filter, find, findIndex,
  findKey, findLast, findLastIndex, findLastKey, first, flatMap, flatMapDeep, flatMapDepth,
  flatten, flattenDeep, flattenDepth, flip, floor, flow, flowRight, forEach,
  forEachRight, forIn, forInRight, forOwn, forOwnRight, fromPairs, functions, functionsIn,
  get, groupBy, gt, gte, has, hasIn, head, identity,
  inRange, includes, indexOf, initial, intersection, intersectionBy, intersectionWith, invert,
  invertBy, invoke, invokeMap, isArguments, isArray, isArrayBuffer, isArrayLike, isArrayLikeObject,
  isBoolean, isBuffer, isDate, isElement, isEmpty, isEqual, isEqualWith, isError,
  isFinite, isFunction, isInteger, isLength, isMap, isMatch, isMatchWith, isNaN,
  isNative, isNil, isNull, isNumber, isObject, isObjectLike, isPlainObject, isRegExp,
  isSafeInteger, isSet, isString, isSymbol, isTypedArray, isUndefined, isWeakMap, isWeakSet,
  iteratee, join, kebabCase, keyBy, keys, keysIn, last, lastIndexOf,
  lowerCase, lowerFirst, lt, lte, map, mapKeys, mapValues, matches,
  matchesProperty, max, maxBy, mean, meanBy, memoize, merge, mergeWith,
  method, methodOf, min, minBy, mixin, multiply, negate, noop,
  now, nth, nthArg, omit, omitBy, once, orderBy, over,
  overArgs, overEvery, overSome, pad, padEnd, padStart, parseInt, partial,
  partialRight, partition, pick, pickBy, property, propertyOf, pull, pullAll,
  pullAllBy, pullAllWith, pullAt, random, range, rangeRight, rearg, reduce,
  reduceRight, reject, remove, repeat, replace, rest, result, reverse,
  round, sample, sampleSize, set, setWith, shuffle, size, slice,
  snakeCase, some, sortBy, sortedIndex, sortedIndexBy, sortedIndexOf, sortedLastIndex, sortedLastIndexBy,
  sortedLastIndexOf, sortedUniq, sortedUniqBy, split, spread, startCase, startsWith, stubArray,
  stubFalse, stubObject, stubString, stubTrue, subtract, sum, sumBy, tail,
  take, takeRight, takeRightWhile, takeWhile, tap, template, templateSettings, throttle,
  thru, times, toArray, toFinite, toInteger, toLength, toLower, toNumber,
  toPairs, toPairsIn, toPath, toPlainObject, toSafeInteger, toString, toUpper, transform,
  trim, trimEnd, trimStart, truncate, unary, unescape, union, unionBy,
  unionWith, uniq, uniqBy, uniqWith, uniqueId, unset, unzip, unzipWith,
  update, updateWith, upperCase, upperFirst, valueOf, values, valuesIn, without,
  words, wrap, xor, xorBy, xorWith, zip, zipObject, zipObjectDeep,
  zipWith,
} = _;
// The chain's wrapper methods, which lodash keeps on its wrapper's prototype.
export const lodash = _;
export const wrapperLodash = _;
export const wrapperAt = wrapper.at;
export const wrapperChain = wrapper.chain;
export const commit = wrapper.commit;
export const wrapperCommit = wrapper.commit;
export const next = wrapper.next;
export const wrapperNext = wrapper.next;
export const plant = wrapper.plant;
export const wrapperPlant = wrapper.plant;
export const wrapperReverse = wrapper.reverse;
export const toIterator = wrapper[Symbol.iterator];
export const wrapperToIterator = wrapper[Symbol.iterator];
export const value = wrapper.value;
export const wrapperValue = wrapper.value;
export const toJSON = wrapper.value;
