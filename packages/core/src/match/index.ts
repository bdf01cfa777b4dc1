/**
 * Capability matching and selection: needs (tag + modes), the reviewed tag vocabulary, policies,
 * local names, the per-tree cap.
 *
 * @module
 */
export { matchCard, TagVocabulary } from './match-card.js';
export type { Need, VocabularyEntry,   } from './match-card.js';
export { selectAgents, deriveLocalName, LOCAL_NAME,  } from './select-agents.js';
export type {
  ReviewedAgent,
  TenantPolicy,
  SelectOptions,
  RoutingDomain,
  Candidate,
  SelectedAgent,
  Verdict,
  
  Selection,
  MatchMemo,
} from './select-agents.js';
