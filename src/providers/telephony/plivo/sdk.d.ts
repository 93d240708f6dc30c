// The SDK's request layer ships without typings; only what client.ts uses is declared.
declare module 'plivo/dist/rest/axios' {
  export function Axios(config: {
    authId: string;
    authToken: string;
    url: string;
    userAgent: string;
    timeout?: number;
  }): (method: string, action: string, params?: Record<string, unknown>) => Promise<{ response: unknown; body: unknown }>;
}
