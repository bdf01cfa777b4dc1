/**
 * Types for the names ADK imports (the module exports every lodash-es name; see lodash.js).
 * Nothing in this repository imports lodash-es but ADK and the test of this stand-in.
 */
declare const lodash: { readonly [name: string]: unknown };
export default lodash;
export declare function cloneDeep<T>(value: T): T;
export declare function isEqual(value: unknown, other: unknown): boolean;
export declare function isEmpty(value: unknown): boolean;
