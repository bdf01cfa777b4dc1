/**
 * The registry API's JSON shapes (ARD §7, docs/registry-api.md), in zod, for its route
 * declarations and so for the OpenAPI document (`GET /openapi.json`). They follow ARD's own
 * OpenAPI (`spec/schemas/ard.openapi.yaml` of ards-project/ard-spec): a search request's
 * `query`, a response's `results` of catalog entries with `score` and `source`, `items` of a
 * list, `facets` of an explore, and the error object of Appendix B.
 *
 * @module
 */
import { z } from 'zod';

/** ARD's query model: free text and a filter of field paths to values. */
const Query = z.looseObject({
  text: z.string().optional(),
  filter: z.record(z.string(), z.unknown()).optional(),
});

export const ArdSearchRequestSchema = z
  .looseObject({
    query: Query.describe('text is required for search'),
    federation: z.enum(['auto', 'referrals', 'none']).optional(),
    pageSize: z.int().min(1).optional(),
    pageToken: z.string().optional(),
  })
  .meta({ id: 'ArdSearchRequest' });

/** A catalog entry as the registry holds it: the AI Catalog entry plus what verification found. */
export const ArdEntrySchema = z
  .looseObject({
    identifier: z.string(),
    displayName: z.string(),
    type: z.string(),
    mediaType: z.string().optional(),
    url: z.string().optional(),
    description: z.string().optional(),
    tags: z.array(z.string()).optional(),
  })
  .meta({ id: 'ArdEntry' });

export const ArdSearchResponseSchema = z
  .looseObject({
    results: z.array(ArdEntrySchema.and(z.looseObject({ score: z.int().min(0).max(100).optional(), source: z.string() }))),
    pageToken: z.string().optional(),
    referrals: z.array(z.looseObject({})).optional(),
  })
  .meta({ id: 'ArdSearchResponse' });

export const ArdExploreRequestSchema = z
  .looseObject({
    query: Query.optional(),
    resultType: z.looseObject({ facets: z.array(z.looseObject({ field: z.string(), limit: z.int().optional(), minCount: z.int().optional() })) }),
  })
  .meta({ id: 'ArdExploreRequest' });

export const ArdExploreResponseSchema = z
  .looseObject({ resultType: z.literal('facets'), facets: z.record(z.string(), z.unknown()) })
  .meta({ id: 'ArdExploreResponse' });

export const ArdListResponseSchema = z
  .looseObject({ items: z.array(z.looseObject({ identifier: z.string() })), pageToken: z.string().optional() })
  .meta({ id: 'ArdListResponse' });
