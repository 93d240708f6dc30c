/**
 * The platform's environment for a demo call (scripts/demo.ts and its scenarios): the phone
 * company's fake, the speech and LLM fakes on 127.0.0.1, and where the gateway listens.
 */
export function demoPlatformEnv(
  fakes: { phoneEnv: Record<string, string>; deepgram: { url: string }; cartesia: { url: string }; openai: { url: string } },
  gatewayPort: number,
  key: string,
): Record<string, string> {
  return {
    ...fakes.phoneEnv,
    GATEWAY_PUBLIC_URL: `ws://127.0.0.1:${gatewayPort}`,
    DEEPGRAM_API_KEY: key,
    DEEPGRAM_BASE_URL: fakes.deepgram.url,
    CARTESIA_API_KEY: key,
    CARTESIA_BASE_URL: fakes.cartesia.url,
    OPENAI_API_KEY: key,
    OPENAI_BASE_URL: fakes.openai.url,
  };
}
