/**
 * Reads TwiML the way the fake Twilio needs to: a small strict XML parser (elements, attributes,
 * text, entities, comments, the XML declaration) and an interpreter for the verbs the platform
 * uses — <Connect><Stream>, <Say>, <Pause>, <Hangup>, <Reject>. Anything else is an error, as a
 * document Twilio cannot execute should fail the test rather than be skipped.
 */

export interface XmlElement {
  name: string;
  attrs: Record<string, string>;
  children: XmlElement[];
  text: string;
}

export class TwimlError extends Error {
  override name = 'TwimlError';
}

const ENTITIES: Record<string, string> = { amp: '&', lt: '<', gt: '>', quot: '"', apos: "'" };

function decodeEntities(s: string): string {
  return s.replace(/&(#x[0-9a-fA-F]+|#\d+|[a-z]+);|&/g, (whole, name: string | undefined) => {
    if (name === undefined) throw new TwimlError('bare "&" in XML');
    if (name.startsWith('#x')) return String.fromCodePoint(parseInt(name.slice(2), 16));
    if (name.startsWith('#')) return String.fromCodePoint(parseInt(name.slice(1), 10));
    const v = ENTITIES[name];
    if (v === undefined) throw new TwimlError(`unknown entity ${whole}`);
    return v;
  });
}

const NAME = /^[A-Za-z_][\w.-]*/;
const ATTR = /^\s+([A-Za-z_][\w.:-]*)\s*=\s*("([^"<]*)"|'([^'<]*)')/;

export function parseXml(xml: string): XmlElement {
  let pos = 0;
  const rest = () => xml.slice(pos);
  const skipMisc = () => {
    for (;;) {
      const ws = /^\s*/.exec(rest())![0];
      pos += ws.length;
      if (rest().startsWith('<?')) {
        const end = xml.indexOf('?>', pos);
        if (end < 0) throw new TwimlError('unterminated processing instruction');
        pos = end + 2;
      } else if (rest().startsWith('<!--')) {
        const end = xml.indexOf('-->', pos);
        if (end < 0) throw new TwimlError('unterminated comment');
        pos = end + 3;
      } else return;
    }
  };

  const element = (): XmlElement => {
    if (xml[pos] !== '<') throw new TwimlError(`expected an element at offset ${pos}`);
    pos++;
    const name = NAME.exec(rest())?.[0];
    if (!name) throw new TwimlError(`bad element name at offset ${pos}`);
    pos += name.length;
    const el: XmlElement = { name, attrs: {}, children: [], text: '' };
    for (let m = ATTR.exec(rest()); m; m = ATTR.exec(rest())) {
      if (m[1] in el.attrs) throw new TwimlError(`duplicate attribute ${m[1]} on <${name}>`);
      el.attrs[m[1]] = decodeEntities(m[3] ?? m[4]);
      pos += m[0].length;
    }
    pos += /^\s*/.exec(rest())![0].length;
    if (rest().startsWith('/>')) {
      pos += 2;
      return el;
    }
    if (xml[pos] !== '>') throw new TwimlError(`malformed <${name}> tag at offset ${pos}`);
    pos++;
    for (;;) {
      const lt = xml.indexOf('<', pos);
      if (lt < 0) throw new TwimlError(`<${name}> is not closed`);
      el.text += decodeEntities(xml.slice(pos, lt));
      pos = lt;
      if (rest().startsWith('<!--')) {
        const end = xml.indexOf('-->', pos);
        if (end < 0) throw new TwimlError('unterminated comment');
        pos = end + 3;
      } else if (rest().startsWith('</')) {
        const close = /^<\/([A-Za-z_][\w.-]*)\s*>/.exec(rest());
        if (!close || close[1] !== name) throw new TwimlError(`expected </${name}> at offset ${pos}`);
        pos += close[0].length;
        return el;
      } else {
        el.children.push(element());
      }
    }
  };

  skipMisc();
  const root = element();
  skipMisc();
  if (pos !== xml.length) throw new TwimlError('content after the root element');
  return root;
}

export interface TwimlStream {
  url: string;
  parameters: Record<string, string>;
  statusCallback?: string;
  statusCallbackMethod?: string;
  name?: string;
}

/** `<Dial><Conference>`: a warm transfer's caller on hold, or the destination joining them. */
export interface TwimlConference {
  name: string;
  /** Fetched (signed) while the participant waits for the conference to start: its `<Play>` is the hold audio. */
  waitUrl?: string;
  waitMethod?: string;
  startConferenceOnEnter: boolean;
  endConferenceOnExit: boolean;
}

/** `<Dial>` with one `<Number>` or `<Sip>` (a transfer), or a `<Conference>`. */
export interface TwimlDial {
  /** Set for `<Dial><Conference>` (then `to` is the conference name). */
  conference?: TwimlConference;
  action?: string;
  method?: string;
  timeoutSecs: number;
  /** The number or SIP URI dialled. */
  to: string;
  noun: 'Number' | 'Sip' | 'Conference';
  /** The dialled leg's status callback and its events (e.g. `answered`). */
  statusCallback?: string;
  statusCallbackEvents: string[];
}

export type TwimlVerb =
  | { verb: 'Connect'; stream: TwimlStream }
  | { verb: 'Dial'; dial: TwimlDial }
  | { verb: 'Say'; text: string; language?: string }
  | { verb: 'Play'; url: string; loop: number }
  | { verb: 'Pause'; lengthSecs: number }
  | { verb: 'Hangup' }
  | { verb: 'Reject'; reason: 'busy' | 'rejected' };

function noChildren(el: XmlElement): void {
  if (el.children.length) throw new TwimlError(`<${el.name}> takes no nested elements`);
}

function readStream(el: XmlElement): TwimlStream {
  const url = el.attrs.url;
  if (!url) throw new TwimlError('<Stream> needs a url attribute');
  const parameters: Record<string, string> = {};
  for (const child of el.children) {
    if (child.name !== 'Parameter') throw new TwimlError(`<${child.name}> is not allowed in <Stream>`);
    const { name, value } = child.attrs;
    if (!name || value === undefined) throw new TwimlError('<Parameter> needs name and value');
    parameters[name] = value;
  }
  return {
    url,
    parameters,
    statusCallback: el.attrs.statusCallback,
    statusCallbackMethod: el.attrs.statusCallbackMethod,
    name: el.attrs.name,
  };
}

const BOOLEAN = /^(true|false)$/;

function readConference(dial: XmlElement, el: XmlElement): TwimlDial {
  noChildren(el);
  const name = el.text.trim();
  if (!name || name.length > 128) throw new TwimlError('<Conference> needs a name of at most 128 characters');
  for (const attr of ['startConferenceOnEnter', 'endConferenceOnExit', 'beep']) {
    const v = el.attrs[attr];
    if (v !== undefined && !BOOLEAN.test(v) && !(attr === 'beep' && /^(onEnter|onExit)$/.test(v))) throw new TwimlError(`<Conference ${attr}="${v}"> is invalid`);
  }
  const waitUrl = el.attrs.waitUrl;
  if (waitUrl !== undefined && !/^https?:\/\/\S+$/.test(waitUrl)) throw new TwimlError(`<Conference waitUrl> ${waitUrl} is not an http(s) URL`);
  return {
    action: dial.attrs.action,
    method: dial.attrs.method,
    timeoutSecs: 30,
    to: name,
    noun: 'Conference',
    statusCallbackEvents: [],
    conference: {
      name,
      waitUrl,
      waitMethod: el.attrs.waitMethod,
      // Twilio's defaults: a participant starts the conference, and leaving does not end it.
      startConferenceOnEnter: el.attrs.startConferenceOnEnter !== 'false',
      endConferenceOnExit: el.attrs.endConferenceOnExit === 'true',
    },
  };
}

/** The verbs of a TwiML <Response>, in order. Throws TwimlError on anything Twilio would refuse. */
export function parseTwiml(xml: string): TwimlVerb[] {
  const root = parseXml(xml);
  if (root.name !== 'Response') throw new TwimlError(`root element must be <Response>, got <${root.name}>`);
  return root.children.map((el): TwimlVerb => {
    switch (el.name) {
      case 'Connect': {
        if (el.children.length !== 1 || el.children[0].name !== 'Stream') {
          throw new TwimlError('<Connect> must hold exactly one <Stream> (the only noun this fake supports)');
        }
        return { verb: 'Connect', stream: readStream(el.children[0]) };
      }
      case 'Dial': {
        if (el.children.length === 1 && el.children[0].name === 'Conference') return { verb: 'Dial', dial: readConference(el, el.children[0]) };
        if (el.children.length !== 1 || !['Number', 'Sip'].includes(el.children[0].name)) {
          throw new TwimlError('<Dial> must hold exactly one <Number>, <Sip> or <Conference> (the nouns this fake supports)');
        }
        const noun = el.children[0];
        const timeout = el.attrs.timeout === undefined ? 30 : Number(el.attrs.timeout);
        if (!Number.isInteger(timeout) || timeout < 5 || timeout > 600) throw new TwimlError('<Dial timeout> must be 5-600');
        const to = noun.text.trim();
        if (noun.name === 'Number' && !/^\+[1-9]\d{1,14}$/.test(to)) throw new TwimlError(`<Number> ${to} is not E.164`);
        if (noun.name === 'Sip' && !/^sips?:/i.test(to)) throw new TwimlError(`<Sip> ${to} is not a SIP URI`);
        return {
          verb: 'Dial',
          dial: {
            action: el.attrs.action,
            method: el.attrs.method,
            timeoutSecs: timeout,
            to,
            noun: noun.name as 'Number' | 'Sip',
            statusCallback: noun.attrs.statusCallback,
            statusCallbackEvents: (noun.attrs.statusCallbackEvent ?? '').split(/[\s,]+/).filter(Boolean),
          },
        };
      }
      case 'Play': {
        noChildren(el);
        const url = el.text.trim();
        if (!/^https?:\/\/\S+$/.test(url)) throw new TwimlError(`<Play> ${url} is not an http(s) URL`);
        const loop = el.attrs.loop === undefined ? 1 : Number(el.attrs.loop);
        if (!Number.isInteger(loop) || loop < 0) throw new TwimlError('<Play loop> must be a whole number');
        return { verb: 'Play', url, loop };
      }
      case 'Say':
        noChildren(el);
        return { verb: 'Say', text: el.text.trim(), language: el.attrs.language };
      case 'Pause': {
        noChildren(el);
        const length = el.attrs.length === undefined ? 1 : Number(el.attrs.length);
        if (!Number.isInteger(length) || length < 0) throw new TwimlError('<Pause length> must be a whole number');
        return { verb: 'Pause', lengthSecs: length };
      }
      case 'Hangup':
        noChildren(el);
        return { verb: 'Hangup' };
      case 'Reject': {
        noChildren(el);
        const reason = el.attrs.reason ?? 'rejected';
        if (reason !== 'busy' && reason !== 'rejected') throw new TwimlError(`<Reject reason="${reason}"> is invalid`);
        return { verb: 'Reject', reason };
      }
      default:
        throw new TwimlError(`<${el.name}> is not supported by the fake Twilio`);
    }
  });
}
