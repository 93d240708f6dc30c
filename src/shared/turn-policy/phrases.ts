/**
 * What callers say, per language: the words the turn policy recognises by meaning. Each language
 * lists its native script and the romanisations STTs commonly produce (Deepgram, Sarvam and Azure
 * write Hindi either way depending on model and settings). Keys are BCP-47 primary subtags.
 *
 * English is spoken alongside every language here (callers switch mid-sentence), so an agent of
 * any language knows English's phrases too (see `languagesOf` in ./index.ts).
 *
 * Entries are matched after normalisation (./normalize.ts): case, punctuation and hyphens do not
 * matter ("Uh-huh." = "uh huh"), and a run of phrases counts as one ("haan haan", "haan ji, theek hai").
 */

export type PhraseTable = Readonly<Record<string, readonly string[]>>;

/** Assent and attention while the agent speaks: recorded, never answered, never an interruption. */
export const BACKCHANNELS: PhraseTable = {
  en: [
    'uh huh', 'uh-huh', 'mm hmm', 'mm-hmm', 'mhm', 'hmm', 'hm', 'mm', 'mmm', 'um hum', 'yeah', 'yea', 'yes', 'yep', 'yup',
    'okay', 'ok', 'okey', 'right', 'alright', 'all right', 'sure', 'i see', 'got it', 'oh', 'ah', 'aha', 'oh okay', 'cool',
    'great', 'fine', 'good', 'exactly', 'true', 'correct', 'go on', 'go ahead', 'i understand', 'makes sense', 'oh i see',
  ],
  hi: [
    'haan', 'han', 'haa', 'ha', 'haan ji', 'ji haan', 'ji', 'jee', 'accha', 'achha', 'acha', 'achchha', 'theek hai', 'thik hai',
    'theek', 'thik', 'hmm', 'sahi', 'sahi hai', 'bilkul', 'haan bilkul', 'ok ji', 'samajh gaya', 'samajh gayi',
    'हाँ', 'हां', 'हा', 'हाँ जी', 'हां जी', 'जी', 'जी हाँ', 'जी हां', 'अच्छा', 'ठीक है', 'ठीक', 'हम्म', 'हूँ', 'सही', 'सही है',
    'बिल्कुल', 'बिलकुल', 'समझ गया', 'समझ गई', 'ओके',
  ],
  ta: [
    'aama', 'aamaa', 'aamam', 'aamanga', 'sari', 'seri', 'saringa', 'seringa', 'hmm', 'okay nga', 'purinjudhu',
    'ஆமா', 'ஆமாம்', 'ஆமாங்க', 'சரி', 'சரிங்க', 'ம்ம்', 'ம்', 'புரிஞ்சுது',
  ],
  te: [
    'avunu', 'aunu', 'avnu', 'sare', 'sari', 'sarey', 'sarenandi', 'sare andi', 'alage', 'haa', 'ha', 'andi', 'ok andi',
    'అవును', 'సరే', 'సరేనండి', 'అలాగే', 'హా', 'అండి', 'ఓకే',
  ],
  bn: [
    'hyan', 'hya', 'haan', 'ha', 'accha', 'achha', 'thik ache', 'thik achhe', 'thik', 'hmm', 'ji', 'bujhlam', 'bujhechi',
    'হ্যাঁ', 'হ্যা', 'আচ্ছা', 'ঠিক আছে', 'ঠিক', 'হুম', 'বুঝলাম', 'বুঝেছি',
  ],
  mr: [
    'ho', 'hoy', 'haan', 'barobar', 'theek aahe', 'thik aahe', 'bara', 'bar', 'accha', 'hmm', 'ji', 'samajla',
    'हो', 'होय', 'बरोबर', 'ठीक आहे', 'बरं', 'बर', 'अच्छा', 'हम्म', 'जी', 'समजलं',
  ],
  kn: [
    'houdu', 'haudu', 'hoon', 'hu', 'sari', 'sariyaagide', 'aaytu', 'aithu', 'haan', 'hmm', 'gottaytu',
    'ಹೌದು', 'ಹೂಂ', 'ಹೂ', 'ಸರಿ', 'ಆಯ್ತು', 'ಗೊತ್ತಾಯ್ತು',
  ],
  gu: [
    'haa', 'ha', 'haan', 'barabar', 'saru', 'saaru', 'bhale', 'hmm', 'ji', 'samjayu', 'theek che',
    'હા', 'હાં', 'બરાબર', 'સારું', 'ભલે', 'હમ્મ', 'જી', 'સમજાયું', 'ઠીક છે',
  ],
};

/** Words that stop the agent on their own, whatever `min_words` says. */
export const INTERRUPTIONS: PhraseTable = {
  en: ['stop', 'wait', 'no', 'hold on', 'hang on', 'excuse me', 'sorry', 'one second', 'one sec', 'one moment', 'just a moment', 'pardon', 'hello'],
  hi: [
    'ruko', 'rukiye', 'ruk jao', 'rukk', 'bas', 'ek minute', 'ek minat', 'ek second', 'ek sec', 'nahi', 'nahin', 'nahi nahi', 'suniye', 'suno',
    'रुको', 'रुकिए', 'रुक जाओ', 'बस', 'एक मिनट', 'एक सेकंड', 'नहीं', 'नही', 'सुनिए', 'सुनो',
  ],
  ta: ['nillu', 'nillunga', 'venda', 'vendam', 'illa', 'illai', 'oru nimisham', 'konjam iru', 'நில்லு', 'நில்லுங்க', 'வேண்டா', 'வேண்டாம்', 'இல்ல', 'இல்லை', 'ஒரு நிமிஷம்'],
  te: ['aagu', 'aagandi', 'vaddu', 'ledu', 'kaadu', 'okka nimisham', 'aagandi andi', 'ఆగు', 'ఆగండి', 'వద్దు', 'లేదు', 'కాదు', 'ఒక్క నిమిషం'],
  bn: ['thamo', 'thamun', 'na', 'dara', 'darao', 'ek minute', 'shunun', 'থামো', 'থামুন', 'না', 'দাঁড়াও', 'দাঁড়ান', 'এক মিনিট', 'শুনুন'],
  mr: ['thamba', 'thaamba', 'nako', 'nahi', 'ek minute', 'ek minit', 'aika', 'थांबा', 'नको', 'नाही', 'एक मिनिट', 'ऐका'],
  kn: ['nilli', 'nillisi', 'beda', 'illa', 'ondu nimisha', 'swalpa iri', 'ನಿಲ್ಲಿ', 'ನಿಲ್ಲಿಸಿ', 'ಬೇಡ', 'ಇಲ್ಲ', 'ಒಂದು ನಿಮಿಷ'],
  gu: ['thobho', 'ubha raho', 'na', 'nahi', 'ek minute', 'saambhlo', 'થોભો', 'ઊભા રહો', 'ના', 'નહીં', 'એક મિનિટ', 'સાંભળો'],
};

/** Single digits as words (and the words that repeat a digit), by which a number is dictated. */
export const DIGIT_WORDS: PhraseTable = {
  en: [
    'zero', 'oh', 'one', 'two', 'three', 'four', 'five', 'six', 'seven', 'eight', 'nine', 'ten', 'eleven', 'twelve', 'thirteen',
    'fourteen', 'fifteen', 'sixteen', 'seventeen', 'eighteen', 'nineteen', 'twenty', 'thirty', 'forty', 'fifty', 'sixty',
    'seventy', 'eighty', 'ninety', 'hundred', 'thousand', 'double', 'triple', 'lakh', 'crore',
  ],
  hi: [
    'shunya', 'shoonya', 'ek', 'do', 'teen', 'char', 'chaar', 'paanch', 'panch', 'chhe', 'chah', 'che', 'saat', 'aath', 'nau', 'dabal', 'tripal',
    'शून्य', 'एक', 'दो', 'तीन', 'चार', 'पांच', 'पाँच', 'छह', 'छः', 'छे', 'सात', 'आठ', 'नौ', 'डबल', 'ट्रिपल', 'ज़ीरो', 'जीरो',
  ],
  ta: [
    'poojyam', 'pujyam', 'onnu', 'ondru', 'rendu', 'irandu', 'moonu', 'moondru', 'naalu', 'nangu', 'anju', 'aindhu', 'aaru', 'ezhu', 'ettu', 'onbadhu', 'ombodhu',
    'பூஜ்ஜியம்', 'ஒன்று', 'ஒண்ணு', 'இரண்டு', 'ரெண்டு', 'மூன்று', 'மூணு', 'நான்கு', 'நாலு', 'ஐந்து', 'அஞ்சு', 'ஆறு', 'ஏழு', 'எட்டு', 'ஒன்பது',
  ],
  te: [
    'sunna', 'okati', 'rendu', 'moodu', 'mudu', 'naalugu', 'nalugu', 'aidu', 'aaru', 'edu', 'enimidi', 'tommidi',
    'సున్నా', 'ఒకటి', 'రెండు', 'మూడు', 'నాలుగు', 'ఐదు', 'ఆరు', 'ఏడు', 'ఎనిమిది', 'తొమ్మిది',
  ],
  bn: [
    'shunyo', 'shunno', 'ek', 'dui', 'tin', 'char', 'panch', 'chhoy', 'choy', 'saat', 'aat', 'noy',
    'শূন্য', 'এক', 'দুই', 'তিন', 'চার', 'পাঁচ', 'ছয়', 'সাত', 'আট', 'নয়',
  ],
  mr: [
    'shunya', 'ek', 'don', 'teen', 'chaar', 'char', 'paach', 'saha', 'saat', 'aath', 'nau', 'naoo',
    'शून्य', 'एक', 'दोन', 'तीन', 'चार', 'पाच', 'सहा', 'सात', 'आठ', 'नऊ',
  ],
  kn: [
    'sonne', 'ondu', 'eradu', 'mooru', 'naalku', 'aidu', 'aaru', 'elu', 'entu', 'ombattu',
    'ಸೊನ್ನೆ', 'ಒಂದು', 'ಎರಡು', 'ಮೂರು', 'ನಾಲ್ಕು', 'ಐದು', 'ಆರು', 'ಏಳು', 'ಎಂಟು', 'ಒಂಬತ್ತು',
  ],
  gu: [
    'shunya', 'ek', 'be', 'tran', 'char', 'chaar', 'paanch', 'chha', 'saat', 'aath', 'nav',
    'શૂન્ય', 'એક', 'બે', 'ત્રણ', 'ચાર', 'પાંચ', 'છ', 'સાત', 'આઠ', 'નવ',
  ],
};

/** A turn ending in one of these is not over: the caller is still joining a thought. */
export const CONTINUATIONS: PhraseTable = {
  en: ['and', 'but', 'or', 'because', 'cause', 'plus', 'um', 'uh', 'umm', 'er', 'erm', 'like', 'the', 'a', 'my', 'at', 'dot', 'underscore', 'dash', 'hyphen', 'at the rate', 'at the rate of'],
  hi: ['aur', 'lekin', 'par', 'magar', 'ya', 'kyunki', 'kyonki', 'matlab', 'और', 'लेकिन', 'पर', 'मगर', 'या', 'क्योंकि', 'मतलब'],
  ta: ['aana', 'matrum', 'appuram', 'illana', 'ஆனா', 'ஆனால்', 'மற்றும்', 'அப்புறம்'],
  te: ['mariyu', 'kaani', 'leda', 'endukante', 'మరియు', 'కానీ', 'లేదా', 'ఎందుకంటే'],
  bn: ['ar', 'aar', 'kintu', 'ba', 'karon', 'আর', 'কিন্তু', 'বা', 'কারণ'],
  mr: ['ani', 'aani', 'pan', 'kinva', 'karan', 'आणि', 'पण', 'किंवा', 'कारण'],
  kn: ['mattu', 'aadre', 'athava', 'yakandre', 'ಮತ್ತು', 'ಆದರೆ', 'ಅಥವಾ', 'ಯಾಕಂದ್ರೆ'],
  gu: ['ane', 'pan', 'athva', 'karan ke', 'અને', 'પણ', 'અથવા', 'કારણ કે'],
};
