/**
 * The keys send_dtmf takes: 0–9, *, #, A–D, and `w` (a half-second pause, as Twilio's SendDigits).
 * Shared by the workflow (which checks the LLM's arguments) and the gateway (which plays them).
 */
export const DTMF_DIGITS = /^[0-9*#A-Dw]+$/;
/** Keys in one send_dtmf call. */
export const MAX_DTMF_DIGITS = 64;
