import crypto from 'node:crypto';

/**
 * The id of a campaign's attempt, and of the call it places: the same for the same (campaign,
 * contact, attempt number) in every process, so a decision replayed after a crash finds its call
 * (the ledger) instead of dialling again. A UUID of version 5's layout (SHA-1 of the name).
 */
export function attemptId(campaignId: string, contactId: string, attempt: number): string {
  const hash = crypto.createHash('sha1').update(`campaign-attempt:${campaignId}:${contactId}:${attempt}`).digest();
  hash[6] = (hash[6] & 0x0f) | 0x50;
  hash[8] = (hash[8] & 0x3f) | 0x80;
  const hex = hash.subarray(0, 16).toString('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}
