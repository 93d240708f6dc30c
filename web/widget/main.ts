/**
 * The embeddable "Talk to us" button (docs/web-calls.md), built into one script the API serves at
 * /widget.js:
 *
 *   <script src="https://voice.example.com/widget.js" data-agent="support" data-key="pk_…"></script>
 *
 * It asks the API that served it for a web call with the publishable key (the page's origin must
 * be one the key allows), then talks through the microphone. It lives in a shadow root, so the
 * page's styles neither reach nor break it. The host element carries the call's state and
 * measurements as data attributes (data-state, data-heard-ms, data-clears, data-turn-latency-ms).
 */
import { openMicrophone, WebVoiceCall, type WebCallGrant } from './voice-call';

const STYLE = `
  :host { all: initial; position: fixed; right: 20px; bottom: 20px; z-index: 2147483000; font-family: system-ui, sans-serif; }
  button { border: 0; border-radius: 999px; padding: 12px 20px; font-size: 15px; font-weight: 600; color: #fff; background: #228be6; cursor: pointer; box-shadow: 0 4px 14px rgba(0,0,0,.2); display: flex; align-items: center; gap: 10px; }
  button[data-live] { background: #e03131; }
  button:disabled { opacity: .7; cursor: wait; }
  .level { width: 10px; height: 10px; border-radius: 50%; background: #fff; transform: scale(var(--level, .3)); transition: transform 60ms linear; }
  p { margin: 8px 0 0; max-width: 260px; font-size: 13px; color: #c92a2a; background: #fff; padding: 6px 10px; border-radius: 8px; box-shadow: 0 2px 8px rgba(0,0,0,.15); }
  p:empty { display: none; }
`;

function mount(script: HTMLScriptElement): void {
  const agent = script.dataset.agent;
  const key = script.dataset.key;
  const label = script.dataset.label ?? 'Talk to us';
  const apiBase = script.dataset.api ?? new URL(script.src).origin;
  const host = document.createElement('div');
  host.setAttribute('data-vap-widget', '');
  const root = host.attachShadow({ mode: 'open' });
  root.innerHTML = `<style>${STYLE}</style><button type="button"><span class="level"></span><span class="text"></span></button><p role="status"></p>`;
  const button = root.querySelector('button')!;
  const text = root.querySelector('.text')!;
  const level = root.querySelector<HTMLElement>('.level')!;
  const status = root.querySelector('p')!;
  document.body.appendChild(host);

  let call: WebVoiceCall | null = null;
  const show = (state: string, caption: string, message = '') => {
    host.dataset.state = state;
    text.textContent = caption;
    status.textContent = message;
    button.disabled = state === 'connecting';
    button.toggleAttribute('data-live', state === 'live');
  };
  show('idle', label);
  if (!agent || !key) return show('error', label, 'This button is missing data-agent or data-key.');

  const start = async () => {
    show('connecting', 'Connecting…');
    let mic: MediaStream;
    try {
      mic = await openMicrophone();
    } catch {
      return show('error', label, 'Allow the microphone to talk.');
    }
    const res = await fetch(`${apiBase}/api/calls/web`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ agent_name: agent }),
    }).catch(() => null);
    const body = res ? await res.json().catch(() => ({})) : {};
    if (!res || res.status !== 201) {
      for (const track of mic.getTracks()) track.stop();
      return show('error', label, `Could not start the call${typeof body.detail === 'string' ? `: ${body.detail}` : ''}.`);
    }
    host.dataset.callId = (body as WebCallGrant).call_id;
    try {
      call = await startCall(body as WebCallGrant, mic);
    } catch (err) {
      for (const track of mic.getTracks()) track.stop();
      return show('error', label, `This browser cannot play the call: ${(err as Error).message}`);
    }
    const stats = call.stats;
    const tick = setInterval(() => {
      host.dataset.heardMs = String(stats.heardMs);
      host.dataset.clears = String(stats.clears);
      if (!call) clearInterval(tick);
    }, 100);
  };

  const startCall = (grant: WebCallGrant, mic: MediaStream) =>
    WebVoiceCall.start(grant, mic, {
      onState: (state, detail) => {
        if (state === 'live') show('live', 'Hang up');
        else {
          call = null;
          show('ended', label, detail ? `The call ended: ${detail}` : '');
        }
      },
      onLevel: (rms) => level.style.setProperty('--level', String(Math.min(1, 0.3 + rms * 6))),
      onTurnLatency: (ms) => (host.dataset.turnLatencyMs = String(ms)),
    });

  button.addEventListener('click', () => {
    if (call) call.hangup();
    else if (host.dataset.state !== 'connecting') void start();
  });
}

const script = document.currentScript as HTMLScriptElement | null;
if (script) {
  if (document.body) mount(script);
  else document.addEventListener('DOMContentLoaded', () => mount(script));
}
