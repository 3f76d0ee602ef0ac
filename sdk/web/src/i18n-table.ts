import type { LoaderKey } from './contract.ts';

/**
 * The loader's strings in every language the widget ships, `|`-separated in the order of KEYS. English
 * is in the loader itself (i18n.ts); the others are the language pack (i18n-pack.ts), a separate file
 * fetched only by pages in another language, so that the loader stays small.
 */
export const KEYS: LoaderKey[] = [
  'verify',
  'verifying',
  'loading',
  'checking',
  'success',
  'failed',
  'retry',
  'expired',
  'close',
  'network',
  'unverified',
];

/** The global the language pack registers TABLE on. */
export const I18N_GLOBAL = '__gatehouseI18n1';

export const EN =
  "I'm human|Verifying…|Loading the challenge…|Checking your answer…|Verified|Verification failed|Try again|Verification expired, verify again|Close|The verification service cannot be reached|Couldn't verify right now — you can still try to continue";

export const TABLE: Record<string, string> = {
  en: EN,
  fr: 'Je suis humain|Vérification…|Chargement du défi…|Vérification de votre réponse…|Vérifié|Échec de la vérification|Réessayer|Vérification expirée, recommencez|Fermer|Le service de vérification est injoignable|Vérification impossible pour le moment — vous pouvez quand même essayer de continuer',
  de: 'Ich bin ein Mensch|Wird geprüft…|Aufgabe wird geladen…|Antwort wird geprüft…|Bestätigt|Prüfung fehlgeschlagen|Erneut versuchen|Prüfung abgelaufen, bitte erneut bestätigen|Schließen|Der Prüfdienst ist nicht erreichbar|Prüfung gerade nicht möglich – Sie können trotzdem versuchen fortzufahren',
  es: 'Soy humano|Verificando…|Cargando el desafío…|Comprobando tu respuesta…|Verificado|La verificación falló|Reintentar|La verificación caducó, vuelve a verificar|Cerrar|No se puede contactar con el servicio de verificación|No se pudo verificar ahora — aún puedes intentar continuar',
  pt: 'Sou humano|Verificando…|Carregando o desafio…|Verificando sua resposta…|Verificado|A verificação falhou|Tentar novamente|A verificação expirou, verifique novamente|Fechar|O serviço de verificação está inacessível|Não foi possível verificar agora — você ainda pode tentar continuar',
  it: 'Sono umano|Verifica in corso…|Caricamento della sfida…|Controllo della risposta…|Verificato|Verifica non riuscita|Riprova|Verifica scaduta, ripeti la verifica|Chiudi|Il servizio di verifica non è raggiungibile|Impossibile verificare ora — puoi comunque provare a continuare',
  ja: '私は人間です|確認中…|チャレンジを読み込み中…|回答を確認中…|確認済み|確認に失敗しました|再試行|確認の有効期限が切れました。もう一度確認してください|閉じる|確認サービスに接続できません|現在は確認できません。このまま続行を試すことはできます',
  zh: '我是人类|正在验证…|正在加载验证…|正在检查你的答案…|验证成功|验证失败|重试|验证已过期，请重新验证|关闭|无法连接验证服务|暂时无法验证 — 你仍可尝试继续',
  ko: '사람입니다|확인 중…|문제를 불러오는 중…|답을 확인하는 중…|확인됨|확인에 실패했습니다|다시 시도|확인이 만료되었습니다. 다시 확인하세요|닫기|확인 서비스에 연결할 수 없습니다|지금은 확인할 수 없습니다. 그래도 계속 진행해 볼 수 있습니다',
  ru: 'Я человек|Проверка…|Загрузка задания…|Проверяем ответ…|Проверено|Проверка не пройдена|Повторить|Срок проверки истёк, пройдите её снова|Закрыть|Сервис проверки недоступен|Сейчас не удалось проверить — вы всё равно можете попробовать продолжить',
  nl: 'Ik ben een mens|Bezig met verifiëren…|Uitdaging laden…|Je antwoord wordt gecontroleerd…|Geverifieerd|Verificatie mislukt|Opnieuw proberen|Verificatie verlopen, verifieer opnieuw|Sluiten|De verificatiedienst is onbereikbaar|Verifiëren lukt nu niet — je kunt toch proberen door te gaan',
  ar: 'أنا إنسان|جارٍ التحقق…|جارٍ تحميل الاختبار…|جارٍ التحقق من إجابتك…|تم التحقق|فشل التحقق|أعد المحاولة|انتهت صلاحية التحقق، تحقّق مرة أخرى|إغلاق|تعذّر الوصول إلى خدمة التحقق|تعذّر التحقق الآن — لا يزال بإمكانك محاولة المتابعة',
  he: 'אני אנושי|מאמת…|טוען את האתגר…|בודק את תשובתך…|אומת|האימות נכשל|נסה שוב|תוקף האימות פג, אמת שוב|סגור|לא ניתן להתחבר לשירות האימות|לא ניתן לאמת כרגע — עדיין אפשר לנסות להמשיך',
  pl: 'Jestem człowiekiem|Weryfikacja…|Ładowanie zadania…|Sprawdzanie odpowiedzi…|Zweryfikowano|Weryfikacja nie powiodła się|Spróbuj ponownie|Weryfikacja wygasła, zweryfikuj ponownie|Zamknij|Usługa weryfikacji jest niedostępna|Nie udało się teraz zweryfikować — możesz mimo to spróbować kontynuować',
  tr: 'İnsanım|Doğrulanıyor…|Görev yükleniyor…|Yanıtınız kontrol ediliyor…|Doğrulandı|Doğrulama başarısız|Tekrar dene|Doğrulamanın süresi doldu, yeniden doğrulayın|Kapat|Doğrulama hizmetine ulaşılamıyor|Şu anda doğrulanamadı — yine de devam etmeyi deneyebilirsiniz',
  sv: 'Jag är en människa|Verifierar…|Läser in uppgiften…|Kontrollerar ditt svar…|Verifierad|Verifieringen misslyckades|Försök igen|Verifieringen har gått ut, verifiera igen|Stäng|Verifieringstjänsten går inte att nå|Det gick inte att verifiera just nu — du kan ändå försöka fortsätta',
  da: 'Jeg er et menneske|Verificerer…|Indlæser opgaven…|Kontrollerer dit svar…|Verificeret|Verificeringen mislykkedes|Prøv igen|Verificeringen er udløbet, verificer igen|Luk|Verificeringstjenesten kan ikke nås|Kunne ikke verificere lige nu — du kan stadig prøve at fortsætte',
  nb: 'Jeg er et menneske|Verifiserer…|Laster inn oppgaven…|Sjekker svaret ditt…|Verifisert|Verifiseringen mislyktes|Prøv igjen|Verifiseringen er utløpt, verifiser på nytt|Lukk|Verifiseringstjenesten kan ikke nås|Kunne ikke verifisere akkurat nå — du kan likevel prøve å fortsette',
  fi: 'Olen ihminen|Vahvistetaan…|Ladataan tehtävää…|Tarkistetaan vastaustasi…|Vahvistettu|Vahvistus epäonnistui|Yritä uudelleen|Vahvistus on vanhentunut, vahvista uudelleen|Sulje|Vahvistuspalveluun ei saada yhteyttä|Vahvistus ei onnistu juuri nyt — voit silti yrittää jatkaa',
  cs: 'Jsem člověk|Ověřování…|Načítání úlohy…|Kontrola odpovědi…|Ověřeno|Ověření se nezdařilo|Zkusit znovu|Platnost ověření vypršela, ověřte se znovu|Zavřít|Ověřovací služba není dostupná|Teď se nepodařilo ověřit — přesto můžete zkusit pokračovat',
  uk: 'Я людина|Перевірка…|Завантаження завдання…|Перевіряємо відповідь…|Перевірено|Перевірку не пройдено|Спробувати ще|Термін перевірки минув, пройдіть її знову|Закрити|Сервіс перевірки недоступний|Зараз не вдалося перевірити — ви все одно можете спробувати продовжити',
  el: 'Είμαι άνθρωπος|Επαλήθευση…|Φόρτωση δοκιμασίας…|Έλεγχος της απάντησής σας…|Επαληθεύτηκε|Η επαλήθευση απέτυχε|Δοκιμάστε ξανά|Η επαλήθευση έληξε, επαληθεύστε ξανά|Κλείσιμο|Η υπηρεσία επαλήθευσης δεν είναι προσβάσιμη|Δεν ήταν δυνατή η επαλήθευση τώρα — μπορείτε πάντως να δοκιμάσετε να συνεχίσετε',
  hu: 'Ember vagyok|Ellenőrzés…|A feladat betöltése…|A válasz ellenőrzése…|Ellenőrizve|Az ellenőrzés sikertelen|Újra|Az ellenőrzés lejárt, ellenőrizzen újra|Bezárás|Az ellenőrző szolgáltatás nem érhető el|Most nem sikerült ellenőrizni — azért megpróbálhatja folytatni',
  ro: 'Sunt om|Se verifică…|Se încarcă provocarea…|Se verifică răspunsul…|Verificat|Verificarea a eșuat|Reîncearcă|Verificarea a expirat, verificați din nou|Închide|Serviciul de verificare nu poate fi accesat|Nu s-a putut verifica acum — puteți încerca totuși să continuați',
  id: 'Saya manusia|Memverifikasi…|Memuat tantangan…|Memeriksa jawaban Anda…|Terverifikasi|Verifikasi gagal|Coba lagi|Verifikasi kedaluwarsa, verifikasi lagi|Tutup|Layanan verifikasi tidak dapat dijangkau|Tidak dapat memverifikasi saat ini — Anda tetap dapat mencoba melanjutkan',
  vi: 'Tôi là người|Đang xác minh…|Đang tải thử thách…|Đang kiểm tra câu trả lời…|Đã xác minh|Xác minh thất bại|Thử lại|Xác minh đã hết hạn, hãy xác minh lại|Đóng|Không thể kết nối dịch vụ xác minh|Hiện không thể xác minh — bạn vẫn có thể thử tiếp tục',
  th: 'ฉันเป็นมนุษย์|กำลังยืนยัน…|กำลังโหลดแบบทดสอบ…|กำลังตรวจคำตอบ…|ยืนยันแล้ว|การยืนยันล้มเหลว|ลองอีกครั้ง|การยืนยันหมดอายุ โปรดยืนยันอีกครั้ง|ปิด|ไม่สามารถเชื่อมต่อบริการยืนยัน|ยังยืนยันไม่ได้ในขณะนี้ — คุณยังลองดำเนินการต่อได้',
  hi: 'मैं इंसान हूँ|सत्यापित किया जा रहा है…|चुनौती लोड हो रही है…|आपका उत्तर जाँचा जा रहा है…|सत्यापित|सत्यापन विफल रहा|फिर से कोशिश करें|सत्यापन की अवधि समाप्त हो गई, फिर से सत्यापित करें|बंद करें|सत्यापन सेवा तक नहीं पहुँचा जा सकता|अभी सत्यापित नहीं हो सका — फिर भी आप आगे बढ़ने की कोशिश कर सकते हैं',
  bg: 'Аз съм човек|Проверка…|Зареждане на задачата…|Проверка на отговора…|Проверено|Проверката е неуспешна|Опитай отново|Проверката изтече, проверете отново|Затвори|Услугата за проверка е недостъпна|Не успяхме да проверим сега — все пак можете да опитате да продължите',
  sk: 'Som človek|Overuje sa…|Načítava sa úloha…|Kontroluje sa odpoveď…|Overené|Overenie zlyhalo|Skúsiť znova|Platnosť overenia vypršala, overte sa znova|Zavrieť|Overovacia služba nie je dostupná|Teraz sa nepodarilo overiť — aj tak môžete skúsiť pokračovať',
};
