// Whisper's languages as transformers v4.40.2 lists them (models/whisper/tokenization_whisper.py): LANGUAGES (code →
// name, in its order, 100 entries, <|yue|> last) and TO_LANGUAGE_CODE (name → code: every name, then the aliases).
// Data only; init_tokens.js and asr_decode.js read it.

const TABLE =
  'en:english,zh:chinese,de:german,es:spanish,ru:russian,ko:korean,fr:french,ja:japanese,pt:portuguese,tr:turkish,' +
  'pl:polish,ca:catalan,nl:dutch,ar:arabic,sv:swedish,it:italian,id:indonesian,hi:hindi,fi:finnish,vi:vietnamese,' +
  'he:hebrew,uk:ukrainian,el:greek,ms:malay,cs:czech,ro:romanian,da:danish,hu:hungarian,ta:tamil,no:norwegian,' +
  'th:thai,ur:urdu,hr:croatian,bg:bulgarian,lt:lithuanian,la:latin,mi:maori,ml:malayalam,cy:welsh,sk:slovak,' +
  'te:telugu,fa:persian,lv:latvian,bn:bengali,sr:serbian,az:azerbaijani,sl:slovenian,kn:kannada,et:estonian,' +
  'mk:macedonian,br:breton,eu:basque,is:icelandic,hy:armenian,ne:nepali,mn:mongolian,bs:bosnian,kk:kazakh,' +
  'sq:albanian,sw:swahili,gl:galician,mr:marathi,pa:punjabi,si:sinhala,km:khmer,sn:shona,yo:yoruba,so:somali,' +
  'af:afrikaans,oc:occitan,ka:georgian,be:belarusian,tg:tajik,sd:sindhi,gu:gujarati,am:amharic,yi:yiddish,lo:lao,' +
  'uz:uzbek,fo:faroese,ht:haitian creole,ps:pashto,tk:turkmen,nn:nynorsk,mt:maltese,sa:sanskrit,lb:luxembourgish,' +
  'my:myanmar,bo:tibetan,tl:tagalog,mg:malagasy,as:assamese,tt:tatar,haw:hawaiian,ln:lingala,ha:hausa,ba:bashkir,' +
  'jw:javanese,su:sundanese,yue:cantonese';

/** LANGUAGES: code → name, in transformers' order (a new Map, shared: do not modify). */
export const LANGUAGES = new Map(TABLE.split(',').map((e) => e.split(':')));

/** TO_LANGUAGE_CODE: name → code, every LANGUAGES name then the aliases, in transformers' order. */
export const TO_LANGUAGE_CODE = new Map([...[...LANGUAGES].map(([code, name]) => [name, code]),
  ['burmese', 'my'],
  ['valencian', 'ca'],
  ['flemish', 'nl'],
  ['haitian', 'ht'],
  ['letzeburgesch', 'lb'],
  ['pushto', 'ps'],
  ['panjabi', 'pa'],
  ['moldavian', 'ro'],
  ['moldovan', 'ro'],
  ['sinhalese', 'si'],
  ['castilian', 'es'],
  ['mandarin', 'zh'],
]);
