/**
 * The agent-card model: safe parsing, protocol detection (1.0, 0.3, 0.2), validation with
 * every problem located by JSON path, normalization into the 1.0 JSON model, the interface
 * policy, card identity hashes, signature verification, and the 0.3 card ADK JS needs.
 *
 * @module
 */
export { parseAgentCard, parseFailure } from './parse-agent-card.js';
export type { ParseCardOptions, ParseCardResult,  } from './parse-agent-card.js';
export type {
  AgentCardModel,
  AgentInterfaceModel,
  AgentSkillModel,
  
  
  
  
  SecuritySchemeModel,
  
  CardProtocolVersion,
} from './model.js';
export { toAdkCard } from './adk-card.js';
export type { AdkAgentCard,  } from './adk-card.js';
export { canonicalMode, modesCover, effectiveModes } from './modes.js';
export { sha256Hex, canonicalJson, canonicalCardSha256 } from './canonical.js';
;
export type { JsonLimits } from './safe-json.js';
export type { UrlJudge,    ChosenInterface,  } from './interface-policy.js';
export { preferredInterface, reviewedInterface } from './interface-policy.js';
export type { InterfaceRewrite } from './interface-policy.js';
export { cardAccess, checkSecurityRequirements, presentableSchemes, securityOrigin } from './security-requirements.js';
export type { CardAccess, SecurityRequirementsResult, DescribedScheme } from './security-requirements.js';
export { checkCard } from './check-card.js';
export type { CheckCardOptions, CheckCardResult } from './check-card.js';
export { verifyCardSignatures, canonicalCardPayload, signCard, signatureFailure, verifyDetachedSignature, signDetached } from './signature.js';
export type { SignatureMode, SignatureOptions, SignatureResult, TrustedKey, CanonicalForm } from './signature.js';
export { deepFreeze } from './model.js';
