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
};
